/**
 * The Sandbox Bridge Worker as Cloudflare's reference deployment shapes it. wrangler.jsonc aliases
 * `@cloudflare/containers` to the local containers shim, so its containers run on the local container
 * server named by the `OMA_LOCAL_CONTAINER_URL` binding.
 */
import { bridge } from "@cloudflare/sandbox/bridge";

export { Sandbox } from "@cloudflare/sandbox";
export { WarmPool } from "@cloudflare/sandbox/bridge";

export default bridge({});
