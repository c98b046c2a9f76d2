import { getSandbox } from "@cloudflare/sandbox";
import { ManagedRuntimeError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { REGISTRY_BINDING } from "../config/plugin-config.js";
import { INSTALLATION_HEADER } from "../protocol/constants.js";
import { installationSchema, sandboxIdSchema } from "../protocol/schemas.js";
import type { SandboxRegistry } from "../registry/sandbox-registry.js";
import type { Outcome } from "../sandbox/outcome.js";
import type { PluginSandbox, SandboxRef } from "../sandbox/plugin-sandbox.js";
import { parseWith } from "./request-parsing.js";
import type { RouteContext } from "./router.js";

/** The installation named by the request's `Differently-Installation` header. */
export function installationOf(request: Request): string {
  return parseWith(
    installationSchema,
    request.headers.get(INSTALLATION_HEADER) ?? undefined,
    `${INSTALLATION_HEADER} header`,
  );
}

/** The registry object of an installation. */
export function registryFor(
  env: RouteContext["env"],
  installation: string,
): DurableObjectStub<SandboxRegistry> {
  return (env[REGISTRY_BINDING] as DurableObjectNamespace<SandboxRegistry>).getByName(installation);
}

/** The sandbox object of `id` in the namespace bound as `binding` (`getSandbox`, addressed by name). */
export function sandboxStub(env: RouteContext["env"], binding: string, id: string): PluginSandbox {
  return getSandbox(env[binding] as DurableObjectNamespace<PluginSandbox>, id);
}

/** The value of an outcome, or its error rebuilt and thrown. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw ManagedRuntimeError.fromJSON(outcome.error);
}

/** The sandbox of the route's `:id` for the request's installation, found through the registry. */
export async function locateSandbox(
  context: RouteContext,
): Promise<{ stub: PluginSandbox; ref: SandboxRef }> {
  const installation = installationOf(context.request);
  const id = parseWith(sandboxIdSchema, context.params.id, "sandbox id");
  const entry = await registryFor(context.env, installation).lookup(id);
  if (entry === null)
    throw new NotFoundError({
      message: `no sandbox ${id} in installation ${installation}`,
      context: { sandboxId: id },
    });
  return { stub: sandboxStub(context.env, entry.binding, id), ref: { id, installation } };
}
