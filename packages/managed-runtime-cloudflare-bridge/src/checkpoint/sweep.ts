import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  type SandboxCheckpointHandle,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { functionSchema, nonNegativeSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import {
  type SweepResult,
  createWorkspaceSnapshots,
} from "@open-managed-agents/workspace-snapshots";
import * as z from "zod";
import { SNAPSHOT_HANDLE_FORMAT, readSnapshotHandle } from "./bridge-checkpointer.js";

export type { SweepResult };

/** Options of {@link sweepBridgeCheckpointBlobs}. */
export interface SweepBridgeCheckpointBlobsOptions {
  /** The driver's `checkpointStore`. */
  readonly checkpointStore: BlobStore;
  /** The driver's `checkpointKeyPrefix`. @default "cloudflare-bridge-workspaces" */
  readonly checkpointKeyPrefix?: string;
  /** Session whose objects are swept. */
  readonly sessionId: string;
  /** Every checkpoint of the session that is still published (active and retained); what they reach is kept. */
  readonly published: readonly SandboxCheckpointHandle[];
  /** Unreferenced objects younger than this are kept. @default 24 h */
  readonly graceMs?: number;
  /** Clock. @default () => new Date() */
  readonly now?: () => Date;
}

const schema = z
  .object({
    checkpointStore: z.custom<BlobStore>(
      (value) => typeof value === "object" && value !== null,
      "must be a BlobStore",
    ),
    checkpointKeyPrefix: z.string().min(1).default("cloudflare-bridge-workspaces"),
    sessionId: z.string().min(1),
    published: z.array(
      z.custom<SandboxCheckpointHandle>((value) => typeof value === "object" && value !== null),
    ),
    graceMs: nonNegativeSafeIntegerSchema.default(24 * 60 * 60 * 1000),
    now: functionSchema<() => Date>().default(() => () => new Date()),
  })
  .strict();

/**
 * Deletes a session's snapshot objects that no published checkpoint (nor any snapshot younger than the grace
 * period) reaches and that are older than the grace period. It holds the session's lock object in the store,
 * so it never runs alongside a checkpoint of the session in any process; a published snapshot that is missing
 * or altered stops it before anything is deleted (`not_found` / `integrity_failed`).
 */
export async function sweepBridgeCheckpointBlobs(
  options: SweepBridgeCheckpointBlobsOptions,
): Promise<SweepResult> {
  const resolved = parseRecord(schema, options, {
    record: "sweep options",
    code: "invalid_config",
  });
  // Handles of the formats before snapshots name nothing a sweep keeps.
  const ids = resolved.published
    .filter((handle) => handle.metadata?.format === SNAPSHOT_HANDLE_FORMAT)
    .map((handle) => readSnapshotHandle(handle, handle.provider, resolved.sessionId).id);
  const snapshots = createWorkspaceSnapshots({
    store: resolved.checkpointStore,
    keyPrefix: resolved.checkpointKeyPrefix,
    now: resolved.now,
  });
  return snapshots.sweep({
    sessionId: resolved.sessionId,
    published: ids,
    graceMs: resolved.graceMs,
  });
}
