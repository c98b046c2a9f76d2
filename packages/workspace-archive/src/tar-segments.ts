import { readlinkSync } from "node:fs";
import { type FileHandle, stat } from "node:fs/promises";
import { setImmediate as nextMacrotask } from "node:timers/promises";
import { InvalidRequestError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { IO_CHUNK_BYTES, SMALL_FILE_BYTES } from "./io-sizes.js";
import { END_OF_ARCHIVE_BYTES, padToBlock } from "./tar-blocks.js";
import { toMemberName } from "./entry-name.js";
import { keptMode } from "./mode-policy.js";
import { createExcludeMatcher } from "./exclude-matcher.js";
import { openForRead, readSmallFile } from "./file-reader.js";
import { encodeMemberHeader, type MemberHeader } from "./tar-header.js";
import { type WalkEntry, walkTree } from "./walk-tree.js";

/** Counters filled while a directory is packed. */
export interface PackTally {
  entries: number;
  files: number;
  directories: number;
  symlinks: number;
  fileBytes: number;
  skipped: string[];
  changed: string[];
}

/** Fresh zeroed counters. */
export function createPackTally(): PackTally {
  return {
    entries: 0,
    files: 0,
    directories: 0,
    symlinks: 0,
    fileBytes: 0,
    skipped: [],
    changed: [],
  };
}

/** Largest mtime an 11-digit octal header field holds. */
const MAX_MTIME_SECONDS = 0o77777777777;
const ZEROS = Buffer.alloc(512);

/** Bytes to copy as they are: headers, small files and padding, gathered up to about 1 MiB. */
export interface BytesSegment {
  readonly kind: "bytes";
  readonly buffers: readonly Buffer[];
}

/** `size` bytes of an open file, read straight into the consumer's buffer. */
export interface FileSegment {
  readonly kind: "file";
  readonly handle: FileHandle;
  readonly size: number;
  /** Set by the reader when the file ended early (the rest was padded with zeros). */
  shrank: boolean;
}

/** One piece of a tar stream. */
export type TarSegment = BytesSegment | FileSegment;

/**
 * Yields the tar stream of a tree as segments. Headers, small files and padding are gathered into byte
 * segments of about 1 MiB; small files are read with short synchronous calls, and the generator returns
 * to the event loop after every segment. A large file is one file segment, read by the consumer directly
 * into its own buffer; its handle is closed when the consumer asks for the next segment. Paths that
 * vanish during the walk are left out.
 */
export async function* tarSegments(
  root: string,
  excludes: readonly string[],
  tally: PackTally,
): AsyncGenerator<TarSegment> {
  const rootStats = await stat(root).catch(() => null);
  if (rootStats === null)
    throw new NotFoundError({ message: "folder to pack does not exist", context: { dir: root } });
  if (!rootStats.isDirectory())
    throw new InvalidRequestError({
      message: "path to pack is not a folder",
      context: { dir: root },
    });
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const add = (buffer: Buffer) => {
    batch.push(buffer);
    batchBytes += buffer.length;
  };
  const flush = (): BytesSegment => {
    const segment = { kind: "bytes" as const, buffers: batch };
    batch = [];
    batchBytes = 0;
    return segment;
  };
  for (const entry of walkTree(root, createExcludeMatcher(excludes))) {
    const header = headerOf(entry);
    const { stats } = entry;
    if (stats.isDirectory()) {
      add(encodeMemberHeader(header));
      tally.directories += 1;
    } else if (stats.isSymbolicLink()) {
      const linkname = unlessVanished(() => readlinkSync(entry.absolute));
      if (linkname === null) continue;
      add(encodeMemberHeader({ ...header, type: "symlink", linkname }));
      tally.symlinks += 1;
    } else if (stats.isFile() && stats.size <= SMALL_FILE_BYTES) {
      const file = unlessVanished(() => readSmallFile(entry.absolute, stats.size));
      if (file === null) continue;
      if (file.changed) tally.changed.push(header.name);
      add(encodeMemberHeader({ ...header, size: file.content.length }));
      add(file.content);
      add(padding(file.content.length));
      tally.files += 1;
      tally.fileBytes += file.content.length;
    } else if (stats.isFile()) {
      const handle = await openForRead(entry.absolute).catch((error: unknown) => vanished(error));
      if (handle === null) continue;
      try {
        add(encodeMemberHeader({ ...header, size: stats.size }));
        yield flush();
        const segment: FileSegment = { kind: "file", handle, size: stats.size, shrank: false };
        yield segment;
        if (segment.shrank || (await handle.stat()).size !== stats.size)
          tally.changed.push(header.name);
      } finally {
        await handle.close();
      }
      add(padding(stats.size));
      tally.files += 1;
      tally.fileBytes += stats.size;
    } else {
      tally.skipped.push(header.name);
      continue;
    }
    tally.entries += 1;
    if (batchBytes >= IO_CHUNK_BYTES) {
      yield flush();
      await nextMacrotask();
    }
  }
  add(Buffer.alloc(END_OF_ARCHIVE_BYTES));
  yield flush();
}

function headerOf({ path, stats }: WalkEntry): MemberHeader {
  return {
    name: toMemberName(path, stats.isDirectory()),
    type: stats.isDirectory() ? "directory" : "file",
    mode: keptMode(stats.mode),
    mtime: Math.min(Math.max(Math.floor(stats.mtimeMs / 1000), 0), MAX_MTIME_SECONDS),
    size: 0,
    linkname: null,
    uid: 0,
    gid: 0,
    uname: "",
    gname: "",
  };
}

function padding(size: number): Buffer {
  return ZEROS.subarray(0, padToBlock(size) - size);
}

function unlessVanished<T>(read: () => T): T | null {
  try {
    return read();
  } catch (error) {
    return vanished(error);
  }
}

function vanished(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
  throw error;
}
