import {
  type ManagedSandboxPort,
  type RuntimeResourceScope,
  type WorkspaceBinding,
  type WorkspacePersistencePort,
  AbortedError,
  IntegrityError,
  InvalidRequestError,
  SandboxFailedError,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256Hex, stableJson } from "@open-managed-agents/runtime-utils";
import type { WorkspaceMountSettings } from "../options.js";
import type { CloudflareRuntime } from "../runtime/cloudflare-runtime.js";

/** Binding and candidate metadata keys of the durable mount. */
const STRATEGY_KEY = "oma.workspace.strategy";
const PREFIX_KEY = "oma.workspace.mountPrefix";
const MARKER_KEY = "oma.workspace.mountMarker";
const FLUSH_TIMEOUT_MS = 60_000;

/** Dependencies of {@link withDurableWorkspaceMount}. */
export interface DurableWorkspaceMountDependencies {
  readonly settings: WorkspaceMountSettings;
  readonly sandbox: ManagedSandboxPort;
  readonly workspace: WorkspacePersistencePort;
  readonly runtime: (input: {
    readonly scope: RuntimeResourceScope;
    readonly lease: { readonly provider: string; readonly runtimeId: string };
  }) => Promise<CloudflareRuntime>;
}

/** The R2 key prefix (s3fs form, leading and trailing `/`) of a session's workspace. */
export function sessionWorkspacePrefix(sessionId: string): string {
  return `/sessions/${encodeURIComponent(sessionId)}/workspace/`;
}

/**
 * Adds the `durable_mount` workspace strategy: `/workspace` is the session's prefix of the R2 bucket,
 * mounted through the Durable Object's credential proxy at attach. A checkpoint flushes the mount and
 * writes a marker object next to the prefix (outside the mount), whose key the candidate records; a later
 * materialize refuses a candidate whose marker is missing or whose hash does not match. Every other
 * strategy passes through to the composition's ports unchanged.
 */
export function withDurableWorkspaceMount(dependencies: DurableWorkspaceMountDependencies): {
  sandbox: ManagedSandboxPort;
  workspace: WorkspacePersistencePort;
} {
  const { settings, workspace: inner } = dependencies;
  const isMount = (binding: WorkspaceBinding): boolean =>
    binding.metadata?.[STRATEGY_KEY] === "durable_mount";

  const workspace: WorkspacePersistencePort = {
    async capabilities(scope) {
      const { strategies } = await inner.capabilities(scope);
      return {
        strategies: [
          "durable_mount",
          ...strategies.filter((strategy) => strategy !== "durable_mount"),
        ],
      };
    },

    async materialize(input) {
      if (input.strategy !== "durable_mount") return inner.materialize(input);
      if (input.signal.aborted)
        throw new AbortedError({ message: "workspace materialize was aborted" });
      const prefix = sessionWorkspacePrefix(input.scope.sessionId);
      const candidate = input.activeCheckpoint;
      if (candidate) {
        const marker = candidate.metadata?.[MARKER_KEY];
        if (candidate.metadata?.[PREFIX_KEY] !== prefix || typeof marker !== "string") {
          throw new InvalidRequestError({
            message: `workspace checkpoint ${candidate.id} was not written by the durable mount of this session`,
            context: { id: candidate.id },
          });
        }
        if (
          `sha256:${await sha256Hex(stableJson({ bucket: settings.bucketName, prefix, marker }))}` !==
          candidate.contentHash
        ) {
          throw new IntegrityError({
            message: `workspace checkpoint ${candidate.id} does not match its content hash`,
            context: { id: candidate.id },
          });
        }
        if ((await settings.bucket.head(marker)) === null) {
          throw new IntegrityError({
            message: `workspace checkpoint ${candidate.id} names a marker that is not in the workspace bucket`,
            context: { id: candidate.id },
          });
        }
      }
      return {
        bindingId: `cf-mount-${input.scope.workId}-${input.fence.generation}`,
        mountPath: WORKSPACE_MOUNT_PATH,
        metadata: { [STRATEGY_KEY]: "durable_mount", [PREFIX_KEY]: prefix },
      };
    },

    async attach(input) {
      if (!isMount(input.binding)) return inner.attach(input);
      const runtime = await dependencies.runtime({ scope: input.scope, lease: input.sandbox });
      await runtime.sandbox.mountBucket({
        bucket: settings.bucketName,
        mountPath: WORKSPACE_MOUNT_PATH,
        endpoint: settings.endpoint,
        prefix: String(input.binding.metadata?.[PREFIX_KEY]),
      });
    },

    async checkpoint(input) {
      if (!isMount(input.binding)) return inner.checkpoint(input);
      const runtime = await dependencies.runtime({ scope: input.scope, lease: input.sandbox });
      const flushed = await runtime.exec("sync", {
        timeoutMs: FLUSH_TIMEOUT_MS,
        signal: input.signal,
      });
      if (flushed.exitCode !== 0)
        throw new SandboxFailedError({
          message: `flushing the workspace mount failed with exit code ${flushed.exitCode}`,
        });
      const prefix = String(input.binding.metadata?.[PREFIX_KEY]);
      const marker = `${prefix.slice(1, -"workspace/".length)}checkpoints/${input.fence.generation}-${encodeURIComponent(input.idempotencyKey)}.json`;
      await settings.bucket.put(
        marker,
        stableJson({ prefix, generation: input.fence.generation, workId: input.scope.workId }),
      );
      const hex = await sha256Hex(stableJson({ bucket: settings.bucketName, prefix, marker }));
      return {
        id: `wmc_${hex.slice(0, 32)}`,
        contentHash: `sha256:${hex}`,
        revision: input.fence.generation,
        metadata: { [STRATEGY_KEY]: "durable_mount", [PREFIX_KEY]: prefix, [MARKER_KEY]: marker },
      };
    },

    release: (input) => (isMount(input.binding) ? Promise.resolve() : inner.release(input)),
  };

  // The mount replaces the checkpoint: the sandbox starts empty and attach mounts the session's prefix.
  const sandbox: ManagedSandboxPort = {
    ...dependencies.sandbox,
    acquire(input) {
      if (input.plan.workspaceStrategy !== "durable_mount")
        return dependencies.sandbox.acquire(input);
      const { metadata: _ignored, ...binding } = input.workspace;
      return dependencies.sandbox.acquire({
        ...input,
        plan: { ...input.plan, workspaceStrategy: "checkpoint_restore" },
        workspace: binding,
      });
    },
  };
  return { sandbox, workspace };
}
