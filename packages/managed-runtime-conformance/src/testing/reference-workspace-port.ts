import {
  CapabilityUnsupportedError,
  IntegrityError,
  WORKSPACE_MOUNT_PATH,
  type WorkspaceBinding,
  type WorkspacePersistencePort,
  type WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";
import { stableJson } from "@open-managed-agents/runtime-utils";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import type { ReferenceWorld } from "./reference-world.js";

/** What a workspace binding carries into `acquire`: nothing, a portable checkpoint or a retained runtime. */
export type BindingCheckpoint =
  | { readonly type: "portable"; readonly checkpointId: string; readonly sourceRuntimeId: string }
  | { readonly type: "retained"; readonly runtimeId: string };

/** Reads the checkpoint a binding carries; null for a first run. */
export function readBindingCheckpoint(binding: WorkspaceBinding): BindingCheckpoint | null {
  const metadata = binding.metadata ?? {};
  if (typeof metadata.retainedRuntimeId === "string")
    return { type: "retained", runtimeId: metadata.retainedRuntimeId };
  if (typeof metadata.checkpointId === "string" && typeof metadata.sourceRuntimeId === "string") {
    return {
      type: "portable",
      checkpointId: metadata.checkpointId,
      sourceRuntimeId: metadata.sourceRuntimeId,
    };
  }
  return null;
}

/**
 * The reference workspace port: `checkpoint_restore` copies `/workspace` into the content-addressed local
 * checkpoint store; `retained_runtime` records the suspended runtime's id. `materialize` verifies the
 * candidate's hash before anything reaches a sandbox.
 */
export function createReferenceWorkspacePort(
  world: ReferenceWorld,
  strategies: readonly WorkspaceStrategy[],
): WorkspacePersistencePort {
  const requireStrategy = (strategy: WorkspaceStrategy): void => {
    if (!strategies.includes(strategy)) {
      throw new CapabilityUnsupportedError({
        message: `workspace strategy ${strategy} is not offered`,
        context: { strategy },
      });
    }
  };
  return {
    capabilities: async () => ({ strategies: [...strategies] }),

    async materialize(input) {
      requireStrategy(input.strategy);
      const bindingId = `ws-${input.scope.workId}-${input.fence.generation}`;
      const candidate = input.activeCheckpoint;
      const metadata = candidate?.metadata;
      if (!candidate || metadata?.strategy !== input.strategy)
        return {
          bindingId,
          mountPath: WORKSPACE_MOUNT_PATH,
          metadata: { strategy: input.strategy },
        };
      if (candidate.contentHash !== digestOf(metadata)) {
        throw new IntegrityError({
          message: `workspace checkpoint ${candidate.id} does not match its content hash`,
          context: { checkpointId: candidate.id },
        });
      }
      const carried: Record<string, string> =
        input.strategy === "retained_runtime"
          ? { retainedRuntimeId: String(metadata.runtimeId) }
          : {
              checkpointId: String(metadata.checkpointId),
              sourceRuntimeId: String(metadata.sourceRuntimeId),
            };
      return {
        bindingId,
        mountPath: WORKSPACE_MOUNT_PATH,
        metadata: { strategy: input.strategy, ...carried },
      };
    },

    async attach() {
      // acquire already restored or reconnected the runtime from the binding.
    },

    async checkpoint(input) {
      const strategy = input.binding.metadata?.strategy;
      if (strategy !== "retained_runtime" && strategy !== "checkpoint_restore") {
        throw new CapabilityUnsupportedError({
          message: "workspace binding names no strategy this port checkpoints",
          context: { bindingId: input.binding.bindingId },
        });
      }
      const runtime = await world.connect(input.sandbox);
      const metadata: Record<string, string> =
        strategy === "retained_runtime"
          ? { strategy, runtimeId: input.sandbox.runtimeId }
          : {
              strategy,
              checkpointId: (await runtime.checkpoint({ kind: "filesystem", signal: input.signal }))
                .checkpointId,
              sourceRuntimeId: input.sandbox.runtimeId,
            };
      const contentHash = digestOf(metadata);
      return {
        id: `wck_${contentHash.slice("sha256:".length, 39)}`,
        contentHash,
        revision: input.fence.generation,
        metadata,
      };
    },

    async release() {
      // Checkpoints are content-addressed and shared; nothing is held per binding.
    },
  };
}

// The candidate hash covers the stored directory's own sha256 id, so it pins the content.
function digestOf(metadata: Readonly<Record<string, unknown>>): string {
  return `sha256:${sha256HexSync(stableJson(metadata))}`;
}
