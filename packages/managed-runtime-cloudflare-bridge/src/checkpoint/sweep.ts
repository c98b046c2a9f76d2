import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  type SandboxCheckpointHandle,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { isFunction } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import { blobPrefixOf, sessionKeyOf } from "./blob-keys.js";
import { isManifestHandle, readManifestHandle } from "./manifest-handle.js";
import { openManifest } from "./manifest-store.js";
import { withSweepLock } from "./session-locks.js";

/** Options of {@link sweepBridgeCheckpointBlobs}. */
export interface SweepBridgeCheckpointBlobsOptions {
  /** The driver's `checkpointStore` (the same object, so the sweep and this process's checkpoints exclude each other). */
  readonly checkpointStore: BlobStore;
  /** The driver's `checkpointKeyPrefix`. @default "cloudflare-bridge-workspaces" */
  readonly checkpointKeyPrefix?: string;
  /** Session whose blobs are swept. */
  readonly sessionId: string;
  /** Every checkpoint of the session that is still published (active and retained); their blobs are kept. */
  readonly published: readonly SandboxCheckpointHandle[];
  /** Unreferenced objects younger than this are kept (a checkpoint in another process may be about to publish them). @default 24 h */
  readonly graceMs?: number;
  /** Clock. @default () => new Date() */
  readonly now?: () => Date;
}

/** What a sweep did. */
export interface SweepResult {
  readonly kept: number;
  readonly deleted: number;
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
    graceMs: z
      .number()
      .int()
      .nonnegative()
      .default(24 * 60 * 60 * 1000),
    now: z.custom<() => Date>(isFunction, "must be a function").default(() => () => new Date()),
  })
  .strict();

/**
 * Deletes a session's content blobs, packs and manifests that no published checkpoint references and that are
 * older than the grace period. Waits for this process's running checkpoints of the session and holds new
 * ones until it is done; a published manifest that is missing or altered stops the sweep before anything
 * is deleted (`not_found` / `integrity_failed`).
 */
export async function sweepBridgeCheckpointBlobs(
  options: SweepBridgeCheckpointBlobsOptions,
): Promise<SweepResult> {
  const resolved = parseRecord(schema, options, {
    record: "sweep options",
    code: "invalid_config",
  });
  const store = resolved.checkpointStore;
  const session = sessionKeyOf(resolved.sessionId);
  return withSweepLock(store, `${resolved.checkpointKeyPrefix}\0${session}`, async () => {
    const referenced = new Set<string>();
    for (const handle of resolved.published) {
      if (!isManifestHandle(handle)) continue;
      const metadata = readManifestHandle(handle, {
        keyPrefix: resolved.checkpointKeyPrefix,
        maxBytes: Number.MAX_SAFE_INTEGER,
      });
      if (metadata.session !== session)
        throw new IntegrityError({
          message: "a published checkpoint belongs to another session",
          context: { reason: "foreign_session" },
        });
      referenced.add(metadata.manifestKey);
      const manifest = await openManifest(store, metadata);
      // A delta manifest keeps its base, and the contents the base places that the delta does not replace.
      if (manifest.base) referenced.add(manifest.base.manifestKey);
      for await (const entry of manifest.entries()) {
        if (entry.type === "file")
          referenced.add(entry.location ? entry.location.pack.sha256 : entry.sha256);
      }
    }
    const cutoff = resolved.now().getTime() - resolved.graceMs;
    let kept = 0;
    const doomed: string[] = [];
    const sessionPrefix = blobPrefixOf(resolved.checkpointKeyPrefix, session).replace(
      /blobs\/$/,
      "",
    );
    let cursor: string | undefined;
    do {
      const page = await store.list({ prefix: sessionPrefix, ...(cursor ? { cursor } : {}) });
      for (const object of page.objects) {
        const name = object.key.slice(object.key.lastIndexOf("/") + 1);
        // The latest-manifest pointer is a hint read only through a hash-checked manifest; it always stays.
        const live = referenced.has(object.key) || referenced.has(name) || name === "latest.json";
        if (live || object.uploaded.getTime() > cutoff) kept += 1;
        else doomed.push(object.key);
      }
      cursor = page.cursor;
    } while (cursor);
    // Deleted after listing, so no page is skipped by keys vanishing under the cursor.
    for (const key of doomed) await store.delete(key);
    return { kept, deleted: doomed.length };
  });
}
