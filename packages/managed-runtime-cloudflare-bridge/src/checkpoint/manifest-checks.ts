import { Readable } from "node:stream";
import { ArchiveRejectedError, LimitExceededError } from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import tar from "tar-stream";
import { inspectCheckpointArchive } from "./archive-policy.js";
import { type ManifestEntry, sortEntries } from "./manifest.js";

/**
 * Holds a manifest to the rules a restore applies (names, link targets, write-through) by inspecting a
 * tar of its headers alone, so a checkpoint that could not be restored is never published.
 */
export async function inspectManifest(entries: readonly ManifestEntry[], limits: ArchiveLimits): Promise<void> {
  const pack = tar.pack();
  const inspected = inspectCheckpointArchive(Readable.from(pack), limits);
  inspected.catch(() => undefined);
  try {
    for (const entry of sortEntries(entries)) {
      const mtime = new Date(entry.mtime * 1000);
      const header: Partial<tar.Header> & { name: string } =
        entry.type === "directory"
          ? { name: `./${entry.path}/`, type: "directory", mode: entry.mode, mtime }
          : entry.type === "symlink"
            ? { name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime }
            : { name: `./${entry.path}`, type: "file", size: 0, mode: entry.mode, mtime };
      // Each header is flushed to the inspector before the next, so headers are never all held at once.
      // A refusal ends the inspector early; the race surfaces it instead of waiting on a flush that never comes.
      const flushed = new Promise<void>((resolve, reject) => pack.entry(header, "", (error?: Error | null) => (error ? reject(error) : resolve())));
      await Promise.race([flushed, inspected.then(() => Promise.reject(new Error("the inspector ended before the last header")))]);
    }
    pack.finalize();
  } catch (error) {
    pack.destroy();
    await inspected;
    throw error;
  }
  await inspected;
}

/** The archive limits, applied to a manifest before anything is transferred or assembled. */
export function checkLimits(entries: readonly ManifestEntry[], limits: ArchiveLimits): void {
  const refuse = (limit: keyof ArchiveLimits, actual: number) =>
    new ArchiveRejectedError({
      message: `checkpoint refused: ${limit} ${limits[limit]} exceeded (${actual})`,
      context: { reason: "limit_exceeded", limit, max: limits[limit], actual },
      cause: new LimitExceededError({ message: `${limit} exceeded`, context: { limit } }),
    });
  if (entries.length > limits.maxEntries) throw refuse("maxEntries", entries.length);
  let total = 0;
  for (const entry of entries) {
    if (entry.type !== "file") continue;
    if (entry.size > limits.maxEntryBytes) throw refuse("maxEntryBytes", entry.size);
    total += entry.size;
    if (total > limits.maxBytes) throw refuse("maxBytes", total);
  }
}
