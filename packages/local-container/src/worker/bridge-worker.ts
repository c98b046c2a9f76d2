/**
 * Cloudflare's Sandbox Bridge Worker, as its reference deployment wires it: the bridge's routes, the
 * `Sandbox` and `WarmPool` Durable Objects. Bundled with `@cloudflare/containers` replaced by the local
 * containers shim, it runs in local workerd over a local container server.
 */
import { WarmPool as BridgeWarmPool, bridge } from "@cloudflare/sandbox/bridge";
import { holdConfiguredInstanceLimit } from "../shim/warm-pool-limit.js";

export { Sandbox } from "@cloudflare/sandbox";
/** The bridge's pool, its ceiling held at `WARM_POOL_MAX_INSTANCES` (the launcher sets the server's limit). */
export const WarmPool = holdConfiguredInstanceLimit(BridgeWarmPool);

export default bridge({});
