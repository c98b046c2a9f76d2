import {
  ArchiveRejectedError,
  LimitExceededError,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ArchiveLimits,
  type ListedHeader,
  inspectHeaders,
} from "@open-managed-agents/workspace-archive";
import { asCheckpointRefusal, checkpointReadOptions } from "./archive-policy.js";
import type { ManifestEntry } from "./manifest.js";

/**
 * Holds a manifest to the rules a restore applies (names, link targets, write-through) and to the archive
 * limits as the entries stream by, so a checkpoint that could not be restored is never published. Each entry
 * is checked as the header its archive member would carry, by the same checks an archive inspection runs.
 */
export async function inspectManifest(
  entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  limits: ArchiveLimits,
): Promise<void> {
  try {
    await inspectHeaders(
      memberHeaders(withinLimits(entries, limits)),
      checkpointReadOptions(limits),
    );
  } catch (error) {
    throw asCheckpointRefusal(error);
  }
}

async function* memberHeaders(entries: AsyncIterable<ManifestEntry>): AsyncGenerator<ListedHeader> {
  for await (const entry of entries) {
    yield {
      name: entry.type === "directory" ? `./${entry.path}/` : `./${entry.path}`,
      type: entry.type,
      mode: entry.mode,
      mtime: entry.mtime,
      size: 0,
      linkname: entry.type === "symlink" ? entry.target : null,
    };
  }
}

/**
 * Passes entries through while holding them to the archive limits (entry count, entry size, total bytes),
 * counted as they stream: the first entry past a limit is `archive_rejected` with `limit_exceeded` as cause.
 */
export async function* withinLimits(
  entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  limits: ArchiveLimits,
): AsyncGenerator<ManifestEntry> {
  let count = 0;
  let total = 0;
  for await (const entry of entries) {
    count += 1;
    if (count > limits.maxEntries) throw refuse(limits, "maxEntries", count);
    if (entry.type === "file") {
      if (entry.size > limits.maxEntryBytes) throw refuse(limits, "maxEntryBytes", entry.size);
      total += entry.size;
      if (total > limits.maxBytes) throw refuse(limits, "maxBytes", total);
    }
    yield entry;
  }
}

/** The archive limits on a whole workspace's totals (entries and file bytes), as a delta's base scan counts them. */
export function checkTotals(
  totals: { readonly count: number; readonly bytes: number },
  limits: ArchiveLimits,
): void {
  if (totals.count > limits.maxEntries) throw refuse(limits, "maxEntries", totals.count);
  if (totals.bytes > limits.maxBytes) throw refuse(limits, "maxBytes", totals.bytes);
}

/** The archive limits, applied to a list of entries at once. */
export async function checkLimits(
  entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  limits: ArchiveLimits,
): Promise<void> {
  for await (const _ of withinLimits(entries, limits));
}

function refuse(
  limits: ArchiveLimits,
  limit: keyof ArchiveLimits,
  actual: number,
): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `checkpoint refused: ${limit} ${limits[limit]} exceeded (${actual})`,
    context: { reason: "limit_exceeded", limit, max: limits[limit], actual },
    cause: new LimitExceededError({ message: `${limit} exceeded`, context: { limit } }),
  });
}
