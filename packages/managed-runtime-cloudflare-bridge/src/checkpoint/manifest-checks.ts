import { ArchiveRejectedError, LimitExceededError } from "@open-managed-agents/runtime-resource-contract";
import { type ArchiveLimits, END_OF_ARCHIVE_BYTES, encodeMemberHeader } from "@open-managed-agents/workspace-archive";
import { inspectCheckpointArchive } from "./archive-policy.js";
import type { ManifestEntry } from "./manifest.js";

/** Header bytes handed to the inspector at a time. */
const HEADER_CHUNK_BYTES = 256 * 1024;

/**
 * Holds a manifest to the rules a restore applies (names, link targets, write-through) and to the archive
 * limits, by inspecting a tar of its headers alone as the entries stream by, so a checkpoint that could not
 * be restored is never published. Headers are encoded synchronously and handed over in chunks.
 */
export async function inspectManifest(entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>, limits: ArchiveLimits): Promise<void> {
  await inspectCheckpointArchive(headerTar(withinLimits(entries, limits)), limits);
}

async function* headerTar(entries: AsyncIterable<ManifestEntry>): AsyncGenerator<Buffer> {
  let chunk: Buffer[] = [];
  let bytes = 0;
  for await (const entry of entries) {
    const header = encodeMemberHeader({
      name: entry.type === "directory" ? `./${entry.path}/` : `./${entry.path}`,
      type: entry.type,
      mode: entry.mode,
      mtime: entry.mtime,
      size: 0,
      linkname: entry.type === "symlink" ? entry.target : null,
      uid: 0,
      gid: 0,
      uname: "",
      gname: "",
    });
    chunk.push(header);
    bytes += header.byteLength;
    if (bytes >= HEADER_CHUNK_BYTES) {
      yield Buffer.concat(chunk, bytes);
      chunk = [];
      bytes = 0;
    }
  }
  chunk.push(Buffer.alloc(END_OF_ARCHIVE_BYTES));
  yield Buffer.concat(chunk);
}

/**
 * Passes entries through while holding them to the archive limits (entry count, entry size, total bytes),
 * counted as they stream: the first entry past a limit is `archive_rejected` with `limit_exceeded` as cause.
 */
export async function* withinLimits(entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>, limits: ArchiveLimits): AsyncGenerator<ManifestEntry> {
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

/** The archive limits, applied to a list of entries at once. */
export async function checkLimits(entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>, limits: ArchiveLimits): Promise<void> {
  for await (const _ of withinLimits(entries, limits));
}

function refuse(limits: ArchiveLimits, limit: keyof ArchiveLimits, actual: number): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `checkpoint refused: ${limit} ${limits[limit]} exceeded (${actual})`,
    context: { reason: "limit_exceeded", limit, max: limits[limit], actual },
    cause: new LimitExceededError({ message: `${limit} exceeded`, context: { limit } }),
  });
}
