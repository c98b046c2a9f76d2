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
  // Read through an async iterator: a refusal then ends the pack by returning from it, not by an abort.
  const headers = (async function* () {
    for await (const chunk of pack as AsyncIterable<Uint8Array>) yield chunk;
  })();
  const inspected = inspectCheckpointArchive(headers, limits);
  inspected.catch(() => undefined);
  try {
    const ended = inspected.then(() => Promise.reject(new Error("the inspector ended before the last header")));
    ended.catch(() => undefined);
    for (const [index, entry] of sortEntries(entries).entries()) {
      const mtime = new Date(entry.mtime * 1000);
      const header: Partial<tar.Header> & { name: string } =
        entry.type === "directory"
          ? { name: `./${entry.path}/`, type: "directory", mode: entry.mode, mtime }
          : entry.type === "symlink"
            ? { name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime }
            : { name: `./${entry.path}`, type: "file", size: 0, mode: entry.mode, mtime };
      // Every 256th header waits until it reached the inspector, so at most that many are held at once.
      // A refusal ends the inspector early; the race surfaces it instead of waiting on a flush that never comes.
      if (index % 256 !== 255) {
        // A callback is given so that an entry cut off by a refusal fails quietly.
        pack.entry(header, "", () => undefined);
        continue;
      }
      const flushed = new Promise<void>((resolve, reject) => pack.entry(header, "", (error?: Error | null) => (error ? reject(error) : resolve())));
      await Promise.race([flushed, ended]);
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
