/**
 * The sandbox plugin Worker: serves the Differently adapter protocol under `/adapter/v1` and holds one
 * sandbox Durable Object (with its container) per sandbox, plus a registry object per installation.
 *
 * Cloudflare fixes a container application's image and instance type, so there is one Durable Object
 * class per instance type; wrangler.jsonc binds the ones in use and `SANDBOX_CLASSES` maps images and
 * sizes to bindings. A custom instance type needs one more class here: `export class SandboxX extends PluginSandbox {}`.
 */
import { handleRequest } from "./worker.js";
import { PluginSandbox } from "./sandbox/plugin-sandbox.js";

export { SandboxRegistry } from "./registry/sandbox-registry.js";
export { PluginSandbox };

/** Sandbox object for a `lite` container application. */
export class SandboxLite extends PluginSandbox {}
/** Sandbox object for a `basic` container application. */
export class SandboxBasic extends PluginSandbox {}
/** Sandbox object for a `standard-1` container application. */
export class SandboxStandard1 extends PluginSandbox {}
/** Sandbox object for a `standard-2` container application. */
export class SandboxStandard2 extends PluginSandbox {}
/** Sandbox object for a `standard-3` container application. */
export class SandboxStandard3 extends PluginSandbox {}
/** Sandbox object for a `standard-4` container application. */
export class SandboxStandard4 extends PluginSandbox {}

export default {
  fetch(request: Request, env: Record<string, unknown>): Promise<Response> {
    return handleRequest(request, env);
  },
} satisfies ExportedHandler<Record<string, unknown>>;
