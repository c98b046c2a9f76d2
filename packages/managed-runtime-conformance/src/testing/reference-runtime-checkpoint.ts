import {
  type ManagedSandboxLease,
  ProviderMismatchError,
  type RuntimeCheckpointPort,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import { readyLease } from "./reference-ready-lease.js";
import type { ReferenceWorld } from "./reference-world.js";

/**
 * A filesystem runtime checkpoint over the local checkpoint store: `create` copies the runtime's
 * workspace, `restore` starts a new runtime from it and probes readiness before returning its lease.
 */
export function createReferenceRuntimeCheckpointPort(
  world: ReferenceWorld,
  readinessCommand: string,
): RuntimeCheckpointPort {
  return {
    async create(input) {
      if (input.kind !== "filesystem") {
        throw new UnsupportedOperationError({
          message: `the reference driver checkpoints only the filesystem, not ${input.kind}`,
          context: { kind: input.kind },
        });
      }
      const handle = await (await world.connect(input.sandbox)).checkpoint({ kind: "filesystem" });
      return {
        provider: world.options.provider,
        checkpointId: handle.checkpointId,
        kind: "filesystem",
        sourceRuntimeId: input.sandbox.runtimeId,
        sessionId: input.scope.sessionId,
        workGeneration: input.fence.generation,
        workspaceRevision: input.workspaceRevision,
        harnessVersion: input.harnessVersion,
        runtimeIdentity: input.runtimeIdentity,
      };
    },
    async restore(input): Promise<ManagedSandboxLease> {
      if (input.checkpoint.provider !== world.options.provider) {
        throw new ProviderMismatchError({
          message: `runtime checkpoint belongs to provider ${input.checkpoint.provider}, not ${world.options.provider}`,
          context: { expected: world.options.provider, actual: input.checkpoint.provider },
        });
      }
      const runtime = await world.restore(
        input.checkpoint.checkpointId,
        input.checkpoint.sourceRuntimeId,
        input.scope.sessionId,
      );
      return readyLease(world, runtime, readinessCommand, input.signal);
    },
  };
}
