/**
 * Cloudflare's Sandbox Bridge Worker, as its reference deployment wires it: the bridge's routes, the
 * `Sandbox` and `WarmPool` Durable Objects. Bundled with `@cloudflare/containers` replaced by the local
 * containers shim, it runs in local workerd over a local container server.
 */
import { bridge } from "@cloudflare/sandbox/bridge";

export { Sandbox } from "@cloudflare/sandbox";
export { WarmPool } from "@cloudflare/sandbox/bridge";

export default bridge({});
