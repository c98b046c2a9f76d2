import { lstat, open, readlink } from "node:fs/promises";
import { join } from "node:path";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { type ArchiveSource, isArchiveFile } from "./archive-source.js";
import { ancestorsOf } from "./entry-name.js";
import { EntryGuard } from "./entry-guard.js";
import { type ArchiveSummary, countEntry, createCounters } from "./inspect-archive.js";
import { parseExtractOptions, type ReadArchiveOptions } from "./options.js";
import {
  applyDirectoryMetadata,
  commitMerge,
  commitReplace,
  type Placement,
  prepareStaging,
} from "./placement.js";
import { removeTree } from "./remove-tree.js";
import { recycledFileChunks, SourceRelease } from "./recycled-file-source.js";
import { StagingWriter } from "./staging-writer.js";
import { createSourceMeter, readTarEntries, toArchiveError } from "./tar-reader.js";

/** Options of {@link extractArchive}. */
export interface ExtractArchiveOptions extends ReadArchiveOptions {
  /**
   * `replace` (default): the folder ends up holding exactly the archive's tree; anything not in the
   * archive is removed. `merge`: archive entries replace what is at their paths, everything else stays
   * (used to apply split parts one after another).
   */
  readonly mode?: "replace" | "merge";
  /** When set, the sha256 of the source bytes must match before anything is moved into place (`integrity_failed`). */
  readonly expectedSha256?: string;
}

/** What {@link extractArchive} reports. */
export interface ExtractionResult extends ArchiveSummary {
  /** sha256 of the source bytes, when `expectedSha256` was given; otherwise null. */
  readonly sha256: string | null;
}

/**
 * Extracts an archive into `dir`. Every entry is validated before it is written, and everything is
 * written into a staging folder on the same filesystem first; only a fully accepted archive is moved into
 * place. On rejection (`archive_rejected`, `limit_exceeded`, `integrity_failed`) the staging folder is
 * removed and `dir` is left exactly as it was. Owners are not restored; files belong to the caller.
 */
export async function extractArchive(
  source: ArchiveSource,
  dir: string,
  options: ExtractArchiveOptions = {},
): Promise<ExtractionResult> {
  const resolved = parseExtractOptions(options);
  const release =
    isArchiveFile(source) && !(await isGzipFile(source.file, resolved.gzip))
      ? new SourceRelease()
      : null;
  const input =
    release !== null && isArchiveFile(source) ? recycledFileChunks(source.file, release) : source;
  const placement = await prepareStaging(dir);
  const merge = resolved.mode === "merge";
  const writer = new StagingWriter(
    placement.staging,
    merge ? (target) => fileInDestination(placement, target) : null,
    release,
  );
  const guard = new EntryGuard(resolved);
  const meter = createSourceMeter(resolved.expectedSha256 !== null);
  const counters = createCounters();
  let sha256: string | null = null;
  let current: string | null = null;
  try {
    for await (const entry of readTarEntries(input, resolved.gzip, meter)) {
      current = entry.header.name;
      const admitted = guard.admit(entry.header);
      countEntry(counters, admitted);
      await writer.write(admitted, entry);
    }
    await guard.verifySymlinks(merge ? (path) => symlinkInDestination(placement, path) : undefined);
    sha256 = meter.hash?.digest("hex") ?? null;
    if (resolved.expectedSha256 !== null && sha256 !== resolved.expectedSha256) {
      throw new IntegrityError({
        message: "archive sha256 does not match the expected value",
        context: { expected: resolved.expectedSha256, actual: sha256 },
      });
    }
    await (merge ? commitMerge(placement) : commitReplace(placement));
  } catch (error) {
    await removeTree(placement.staging);
    throw toArchiveError(error, current);
  }
  await applyDirectoryMetadata(placement, writer.directories);
  return {
    entries: guard.entries,
    ...counters,
    bytes: guard.bytes,
    archiveBytes: meter.bytes,
    gzip: meter.gzip,
    sha256,
  };
}

/** Whether a `{file}` source is gzip (then zlib owns the buffers and reuse does not apply). */
async function isGzipFile(path: string, gzip: boolean | "auto"): Promise<boolean> {
  if (gzip !== "auto") return gzip;
  const handle = await open(path, "r").catch((error: unknown) => {
    throw new NotFoundError({
      message: "archive file cannot be opened",
      context: { file: path },
      cause: error,
    });
  });
  try {
    const magic = Buffer.alloc(2);
    await handle.read(magic, 0, 2, 0);
    return magic[0] === 0x1f && magic[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Symlink lookup for paths the archive does not hold: what the merge will keep from the destination. */
async function symlinkInDestination(placement: Placement, path: string): Promise<string | null> {
  if ((await lstat(join(placement.staging, path)).catch(() => null)) !== null) return null;
  const existing = join(placement.destination, path);
  const stats = await lstat(existing).catch(() => null);
  return stats?.isSymbolicLink() ? readlink(existing) : null;
}

/** A hardlink target already in the destination (from an earlier part), reached without any symlink. */
async function fileInDestination(placement: Placement, target: string): Promise<string | null> {
  for (const ancestor of ancestorsOf(target)) {
    const stats = await lstat(join(placement.destination, ancestor)).catch(() => null);
    if (!stats?.isDirectory()) return null;
  }
  const path = join(placement.destination, target);
  const stats = await lstat(path).catch(() => null);
  return stats?.isFile() ? path : null;
}
