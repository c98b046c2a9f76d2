import {
  AbortedError,
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type SandboxResourceCapabilities,
  SandboxFailedError,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { readyLease } from "./reference-ready-lease.js";
import { readBindingCheckpoint } from "./reference-workspace-port.js";
import type { ReferenceWorld } from "./reference-world.js";

/** Metadata key marking a lease whose runtime was retained by `suspend`. */
const SUSPENDED = "suspended";

/**
 * The reference sandbox port. `acquire` starts (or restores, or reconnects to) a runtime and returns its
 * lease only after the readiness probe found the harness executable; a failed probe destroys the runtime.
 */
export function createReferenceSandboxPort(
  world: ReferenceWorld,
  capabilities: SandboxResourceCapabilities,
  readinessCommand: string,
): ManagedSandboxPort {
  const start = async (
    input: Parameters<ManagedSandboxPort["acquire"]>[0],
  ): Promise<ManagedSandboxRuntime> => {
    const checkpoint = readBindingCheckpoint(input.workspace);
    if (checkpoint?.type === "retained") {
      const runtime = await world.connect({
        provider: world.options.provider,
        runtimeId: checkpoint.runtimeId,
      });
      if ((await runtime.status()) !== "running") {
        throw new SandboxFailedError({
          message: `retained runtime ${checkpoint.runtimeId} is gone`,
          context: { runtimeId: checkpoint.runtimeId },
        });
      }
      return runtime;
    }
    if (checkpoint?.type === "portable")
      return world.restore(
        checkpoint.checkpointId,
        checkpoint.sourceRuntimeId,
        input.scope.sessionId,
      );
    return world.createRuntime(input.scope.sessionId);
  };

  return {
    capabilities: async () => capabilities,

    async acquire(input) {
      if (input.signal.aborted)
        throw new AbortedError({ message: "acquire was aborted before it started" });
      const runtime = await start(input);
      return readyLease(world, runtime, readinessCommand, input.signal);
    },

    async heartbeat(input) {
      const status = await (await world.connect(input.lease))
        .status()
        .catch(() => "stopped" as const);
      return status === "running"
        ? { type: "alive" }
        : { type: "lost", reason: `runtime is ${status}` };
    },

    async suspend(input) {
      if (capabilities.suspendResume !== "supported") {
        throw new UnsupportedOperationError({
          message: `${world.options.provider} does not retain runtimes`,
          context: { provider: world.options.provider },
        });
      }
      const runtime = await world.connect(input.lease);
      if ((await runtime.status()) !== "running") {
        throw new SandboxFailedError({
          message: `runtime ${input.lease.runtimeId} is gone and cannot be retained`,
          context: { runtimeId: input.lease.runtimeId },
        });
      }
      return world.leaseOf(runtime, { [SUSPENDED]: true });
    },

    async terminate(input) {
      await (await world.connect(input.lease)).destroy();
    },

    async reap(input) {
      await (await world.connect(input.lease)).destroy();
    },

    async inspect(lease: ManagedSandboxLease) {
      const status = await (await world.connect(lease)).status();
      if (status === "running" && lease.metadata?.[SUSPENDED] === true)
        return { state: "suspended" };
      return { state: status };
    },
  };
}
