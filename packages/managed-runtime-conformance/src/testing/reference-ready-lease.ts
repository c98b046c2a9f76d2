import type { ManagedSandboxLease } from "@open-managed-agents/runtime-resource-contract";
import { type ManagedSandboxRuntime, verifyRuntimeEnvironment } from "@open-managed-agents/sandbox";
import type { ReferenceWorld } from "./reference-world.js";

/** The lease of `runtime` once the readiness probe found the harness; a failed probe destroys the runtime first. */
export async function readyLease(
  world: ReferenceWorld,
  runtime: ManagedSandboxRuntime,
  readinessCommand: string,
  signal: AbortSignal,
): Promise<ManagedSandboxLease> {
  try {
    await verifyRuntimeEnvironment(runtime, {
      command: readinessCommand,
      timeoutMs: world.options.readinessTimeoutMs,
      signal,
    });
  } catch (error) {
    await runtime.destroy();
    throw error;
  }
  return world.leaseOf(runtime);
}
