import {
  CapabilityUnsupportedError,
  IntegrityError,
  InvalidRequestError,
  type ManagedSandboxLease,
  type RuntimeResourceFence,
  type RuntimeResourceScope,
  type WorkspaceBinding,
  type WorkspaceCheckpointCandidate,
  type WorkspacePersistencePort,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "./abort.js";
import { createBoundedCache } from "./bounded-cache.js";
import {
  CHECKPOINT_METADATA_KEY,
  type EncodedCheckpointHandle,
  checkpointMetadata,
  decodeCheckpointHandle,
  decodeCheckpointMetadata,
  encodeCheckpointHandle,
} from "./checkpoint-handle.js";
import type {
  ProviderWorkspaceStrategy,
  ResolvedProviderManagedRuntimeOptions,
} from "./options.js";
import { type RuntimeRegistry, providerFailure } from "./runtime-registry.js";

/** Binding metadata key naming the strategy the binding was materialized for. */
export const WORKSPACE_STRATEGY_METADATA_KEY = "oma.workspace.strategy";

/** Length of the hash prefix in a workspace candidate id (`wrc_<prefix>`). */
const CANDIDATE_ID_HEX = 32;

/** Dependencies of {@link createProviderWorkspacePort}. */
export interface ProviderWorkspacePortDependencies<R extends ManagedSandboxRuntime> {
  readonly options: ResolvedProviderManagedRuntimeOptions<R>;
  readonly registry: RuntimeRegistry<R>;
}

/**
 * Workspace persistence through provider checkpoints. The checkpoint handle lives in the candidate's
 * publication metadata as stable JSON; the candidate's content hash is the sha256 of that JSON, so a
 * tampered handle is refused before anything reaches a sandbox.
 */
export function createProviderWorkspacePort<R extends ManagedSandboxRuntime>(
  dependencies: ProviderWorkspacePortDependencies<R>,
): WorkspacePersistencePort {
  const { options, registry } = dependencies;
  const { providerName } = options;
  const candidates = createBoundedCache<WorkspaceCheckpointCandidate>(1_024);

  const ownStrategy = (strategy: string): ProviderWorkspaceStrategy => {
    if ((options.workspace.strategies as readonly string[]).includes(strategy))
      return strategy as ProviderWorkspaceStrategy;
    throw new CapabilityUnsupportedError({
      message: `workspace strategy ${strategy} is not offered by ${providerName}`,
      context: { strategy },
    });
  };

  const bindingStrategy = (binding: WorkspaceBinding): ProviderWorkspaceStrategy => {
    const strategy = binding.metadata?.[WORKSPACE_STRATEGY_METADATA_KEY];
    if (typeof strategy !== "string") {
      throw new InvalidRequestError({
        message: `workspace binding ${binding.bindingId} was not materialized by ${providerName}`,
      });
    }
    return ownStrategy(strategy);
  };

  const capture = async (
    input: {
      readonly scope: RuntimeResourceScope;
      readonly sandbox: ManagedSandboxLease;
      readonly signal: AbortSignal;
    },
    strategy: ProviderWorkspaceStrategy,
  ): Promise<EncodedCheckpointHandle> => {
    const lease = registry.ownLease(input.sandbox);
    if (strategy === "retained_runtime") {
      const retained = decodeCheckpointMetadata(lease.metadata, {
        provider: providerName,
        scope: "runtime",
        source: "suspended lease",
      });
      if (!retained)
        throw new InvalidRequestError({
          message: "a retained_runtime checkpoint needs the lease returned by suspend",
        });
      return retained;
    }
    const runtime = await registry.resolve(input.scope, lease);
    let handle: unknown;
    try {
      handle = await runtime.checkpoint({ kind: "filesystem", signal: input.signal });
    } catch (error) {
      throw providerFailure(error, `checkpointing runtime ${lease.runtimeId} failed`, {
        runtimeId: lease.runtimeId,
      });
    }
    return encodeCheckpointHandle(handle, {
      provider: providerName,
      scope: "portable",
      source: "runtime checkpoint",
    });
  };

  return {
    capabilities: async () => ({ strategies: options.workspace.strategies }),

    async materialize({ scope, fence, strategy, activeCheckpoint, signal }) {
      throwIfAborted(signal, "workspace");
      const own = ownStrategy(strategy);
      const metadata: Record<string, string> = { [WORKSPACE_STRATEGY_METADATA_KEY]: own };
      if (activeCheckpoint) {
        const decoded = decodeCheckpointHandle(
          activeCheckpoint.metadata?.[CHECKPOINT_METADATA_KEY],
          activeCheckpoint.contentHash,
          {
            provider: providerName,
            scope: own === "retained_runtime" ? "runtime" : "portable",
            source: `workspace checkpoint ${activeCheckpoint.id}`,
          },
        );
        if (activeCheckpoint.id !== candidateId(decoded.contentHash)) {
          throw new IntegrityError({
            message: `workspace checkpoint ${activeCheckpoint.id} does not match its content hash`,
            context: { id: activeCheckpoint.id },
          });
        }
        Object.assign(metadata, checkpointMetadata(decoded));
      }
      return { bindingId: bindingId(scope, fence), mountPath: WORKSPACE_MOUNT_PATH, metadata };
    },

    // The workspace reaches the sandbox in acquire (create, restore or resume), so attach only checks ownership.
    async attach({ binding, sandbox, signal }) {
      throwIfAborted(signal, "workspace");
      registry.ownLease(sandbox);
      bindingStrategy(binding);
    },

    async checkpoint(input) {
      const cached = candidates.get(input.idempotencyKey);
      if (cached) return cached;
      throwIfAborted(input.signal, "workspace checkpoint");
      const encoded = await capture(input, bindingStrategy(input.binding));
      const candidate: WorkspaceCheckpointCandidate = {
        id: candidateId(encoded.contentHash),
        contentHash: encoded.contentHash,
        revision: input.fence.generation,
        metadata: { [CHECKPOINT_METADATA_KEY]: encoded.json },
      };
      candidates.set(input.idempotencyKey, candidate);
      return candidate;
    },

    async release() {},
  };
}

function candidateId(contentHash: string): string {
  return `wrc_${contentHash.slice("sha256:".length, "sha256:".length + CANDIDATE_ID_HEX)}`;
}

function bindingId(scope: RuntimeResourceScope, fence: RuntimeResourceFence): string {
  return `provider-ws-${scope.workId}-${fence.generation}`;
}
