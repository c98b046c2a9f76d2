import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  ProviderMismatchError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import {
  type SnapshotProgress,
  createWorkspaceSnapshots,
  sessionKeyOf,
} from "@open-managed-agents/workspace-snapshots";
import * as z from "zod";
import type { BridgeCheckpointer, PreparedRestore } from "../runtime/bridge-runtime.js";
import { createBridgeSnapshotSandbox } from "../snapshots/bridge-snapshot-sandbox.js";
import type { BridgeClient } from "../wire/bridge-client.js";

/**
 * A transfer in progress, for progress lines: the snapshot run's report (its step, entries and bytes; see
 * @open-managed-agents/workspace-snapshots) and what it belongs to.
 */
export interface CheckpointProgress extends SnapshotProgress {
  readonly phase: "checkpoint" | "restore";
  /** Absent while a restore is read from the store, before its sandbox exists. */
  readonly sandboxId?: string;
}

/** Options of {@link createBridgeCheckpointer}; validated by the driver factory. */
export interface BridgeCheckpointerOptions {
  readonly provider: string;
  readonly client: BridgeClient;
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly excludes: readonly string[];
  /** Largest request body the bridge accepts: no file written into a sandbox is larger. */
  readonly maxRequestBytes: number;
  /** Size of each file written into a sandbox during a restore. */
  readonly partBytes: number;
  /** Limits a workspace is held to (`maxEntries`). */
  readonly archiveLimits: ArchiveLimits;
  /** How transfers are compressed. @default "auto" */
  readonly compression?: "auto" | "gzip" | "off";
  readonly spoolDirectory?: string;
  readonly onProgress?: (progress: CheckpointProgress) => void;
}

/** Metadata `format` of a snapshot handle; any other handle (earlier formats included) is refused. */
export const SNAPSHOT_HANDLE_FORMAT = "snapshot";

const metadataSchema = z
  .object({
    format: z.literal(SNAPSHOT_HANDLE_FORMAT),
    session: z.string().regex(/^[0-9a-f]{32}$/),
    contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  })
  .strict();

/**
 * The snapshot a handle names and its session key, checked before any byte is read. With `sessionId`, a
 * handle of another session is refused.
 */
export function readSnapshotHandle(
  handle: SandboxCheckpointHandle,
  provider: string,
  sessionId?: string,
): { readonly id: string; readonly session: string } {
  if (handle.provider !== provider) {
    throw new ProviderMismatchError({
      message: "checkpoint belongs to another provider",
      context: { expected: provider, actual: handle.provider },
    });
  }
  const parsed = metadataSchema.safeParse(handle.metadata ?? {});
  if (
    !parsed.success ||
    handle.kind !== "filesystem" ||
    handle.scope !== "portable" ||
    parsed.data.contentHash !== handle.checkpointId
  ) {
    // Checkpoints of the formats before snapshots land here too: they do not restore.
    throw new IntegrityError({
      message: "bridge checkpoint handle is malformed",
      context: { checkpointId: handle.checkpointId.slice(0, 80) },
    });
  }
  if (sessionId !== undefined && sessionKeyOf(sessionId) !== parsed.data.session) {
    throw new IntegrityError({
      message: "the checkpoint belongs to another session",
      context: { reason: "foreign_session" },
    });
  }
  return { id: parsed.data.contentHash.slice("sha256:".length), session: parsed.data.session };
}

/** Scratch of snapshot runs: the bridge's file routes reach only `/workspace`, and snapshots leave it out. */
const SCRATCH = "/workspace/.oma-snapshots";

/**
 * Checkpoints `/workspace` of a bridge sandbox as workspace snapshots (see @open-managed-agents/workspace-snapshots)
 * through the bridge's exec and file routes. A runtime without a session checkpoints into a session of its own.
 */
export function createBridgeCheckpointer(options: BridgeCheckpointerOptions): BridgeCheckpointer {
  const { client, provider } = options;
  // Made on first use: a runtime that never checkpoints needs no store.
  let made: ReturnType<typeof createWorkspaceSnapshots> | undefined;
  const snapshots = () =>
    (made ??= createWorkspaceSnapshots({
      store: options.store,
      keyPrefix: options.keyPrefix,
      excludes: options.excludes,
      scratchDirectory: SCRATCH,
      compression: options.compression,
      maxEntries: options.archiveLimits.maxEntries,
      partBytes: Math.min(options.partBytes, options.maxRequestBytes),
      spoolDirectory: options.spoolDirectory,
    }));
  /** The options' progress callback, told what each report belongs to. */
  const reporter = (phase: CheckpointProgress["phase"], sandboxId?: string) => {
    const { onProgress } = options;
    const sandbox = sandboxId === undefined ? {} : { sandboxId };
    return (
      onProgress && ((progress: SnapshotProgress) => onProgress({ phase, ...sandbox, ...progress }))
    );
  };

  const checkpointer: BridgeCheckpointer = {
    async checkpoint({ sandboxId, name, sessionId = `runtime:${sandboxId}`, signal }) {
      const ref = await snapshots().checkpoint({
        sandbox: createBridgeSnapshotSandbox(client, sandboxId),
        sessionId,
        source: { sandbox: sandboxId, ...(name === undefined ? {} : { name: name.slice(0, 256) }) },
        signal,
        onProgress: reporter("checkpoint", sandboxId),
      });
      const contentHash = `sha256:${ref.id}`;
      return {
        provider,
        checkpointId: contentHash,
        sourceRuntimeId: sandboxId,
        kind: "filesystem",
        scope: "portable",
        metadata: { format: SNAPSHOT_HANDLE_FORMAT, session: ref.session, contentHash },
      };
    },

    async prepareRestore({ handle, sessionId, signal }): Promise<PreparedRestore> {
      const { id, session } = readSnapshotHandle(handle, provider, sessionId);
      const onProgress = reporter("restore");
      const prepared = await snapshots().prepareRestore({ session, id, signal, onProgress });
      return {
        size: prepared.size,
        async send(sandboxId, sendSignal) {
          await prepared.send(createBridgeSnapshotSandbox(client, sandboxId), {
            signal: sendSignal,
            onProgress: reporter("restore", sandboxId),
          });
        },
        dispose: () => prepared.dispose(),
      };
    },

    async restore({ sandboxId, handle, sessionId, signal }) {
      const ready = await checkpointer.prepareRestore({ handle, sessionId, signal });
      try {
        await ready.send(sandboxId, signal);
      } finally {
        await ready.dispose();
      }
    },
  };
  return checkpointer;
}
