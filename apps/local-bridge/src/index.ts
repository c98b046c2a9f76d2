/**
 * The Sandbox Bridge Worker as Cloudflare's reference deployment shapes it. wrangler.jsonc aliases
 * `@cloudflare/containers` to the local containers shim, so its containers run on the local container
 * server named by the `OMA_LOCAL_CONTAINER_URL` binding.
 */
import { WarmPool as BridgeWarmPool, bridge } from "@cloudflare/sandbox/bridge";
import { holdConfiguredInstanceLimit } from "@open-managed-agents/local-container/containers-shim";

export { Sandbox } from "@cloudflare/sandbox";
/** The bridge's pool, its ceiling held at `WARM_POOL_MAX_INSTANCES` (the launcher sets the server's limit). */
export const WarmPool = holdConfiguredInstanceLimit(BridgeWarmPool);

export default bridge({});
