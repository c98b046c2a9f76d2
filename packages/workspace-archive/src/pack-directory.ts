import { readlink, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pipeline, type Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { NotFoundError, InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import tar, { type Header, type Pack } from "tar-stream";
import { toWebStream } from "./archive-source.js";
import { IO_CHUNK_BYTES, SMALL_FILE_BYTES } from "./constants.js";
import { DigestTransform } from "./digest-transform.js";
import { toMemberName } from "./entry-name.js";
import { createExcludeMatcher } from "./exclude-matcher.js";
import { type EntrySink, openForRead, readSmallFile, streamFile, type SmallFile } from "./file-reader.js";
import { parsePackOptions } from "./options.js";
import { type WalkEntry, walkTree } from "./walk-tree.js";

/** Options of {@link packDirectory}. */
export interface PackDirectoryOptions {
  /** Glob patterns of paths to leave out (see the README for the syntax). */
  readonly excludes?: readonly string[];
  /** Compress with gzip; `true` means level 1. Off by default: gzip is far slower than tar. */
  readonly gzip?: boolean | { readonly level?: number };
}

/** What {@link packDirectory} reports once the archive has been read to the end. */
export interface PackDigest {
  /** Lowercase hex sha256 of the emitted bytes (compressed bytes when gzip is on). */
  readonly sha256: string;
  /** Emitted byte count. */
  readonly bytes: number;
  readonly entries: number;
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  /** Sum of file sizes. */
  readonly fileBytes: number;
  /** Sockets, FIFOs and devices, which archives do not carry. */
  readonly skipped: readonly string[];
  /** Files whose size changed while they were read (their bytes may be inconsistent). */
  readonly changed: readonly string[];
}

/** A streaming archive of a directory. */
export interface PackedDirectory {
  /** The tar (or tar.gz) bytes. Read it to the end: `digest` settles only then. */
  readonly stream: Readable;
  /** Resolves after the last byte was emitted; rejects when packing fails. */
  readonly digest: Promise<PackDigest>;
  /** The same bytes as a web `ReadableStream` (for `fetch` bodies); use either this or `stream`. */
  toWebStream(): ReadableStream<Uint8Array>;
}

type HeaderArgument = Partial<Header> & Pick<Header, "name">;

const PREFETCH_FILES = 32;
const MAX_MTIME_SECONDS = 2 ** 31 - 1;

/**
 * Packs `dir` into a tar stream, GNU-tar compatible (`./`, `./a.txt`, `./dir/`), in sorted order so the
 * same tree always gives the same bytes and hash. Regular files, directories and symlinks (kept as links)
 * are stored with their modes and mtimes; owners are recorded as 0. Memory use is bounded: small files
 * are read a few at a time, large ones streamed in 1 MiB reads.
 */
export function packDirectory(dir: string, options: PackDirectoryOptions = {}): PackedDirectory {
  const { excludes, gzipLevel } = parsePackOptions(options);
  if (typeof dir !== "string" || dir.length === 0) throw new InvalidRequestError({ message: "packDirectory needs a folder path" });
  const pack = tar.pack({ highWaterMark: 4 * IO_CHUNK_BYTES });
  const hasher = new DigestTransform();
  const tally = { entries: 0, files: 0, directories: 0, symlinks: 0, fileBytes: 0, skipped: [] as string[], changed: [] as string[] };
  let failed: ((error: unknown) => void) | null = null;
  const streamed = new Promise<void>((resolveStreamed, reject) => {
    failed = reject;
    const source = pack as unknown as Readable;
    if (gzipLevel === null) pipeline(source, hasher, () => undefined);
    else pipeline(source, createGzip({ level: gzipLevel, chunkSize: 256 * 1024 }), hasher, () => undefined);
    hasher.on("end", () => resolveStreamed());
    hasher.on("error", reject);
    hasher.on("close", () => reject(new Error("archive stream closed before it was read to the end")));
  });
  const produced = produce(resolve(dir), pack, createExcludeMatcher(excludes), tally).catch((error: unknown) => {
    (pack as unknown as Readable).destroy(error as Error);
    failed?.(error);
    throw error;
  });
  const digest = Promise.all([produced, streamed, hasher.digest]).then(([, , hashed]) => ({ ...hashed, ...tally }));
  digest.catch(() => undefined);
  return { stream: hasher, digest, toWebStream: () => toWebStream(hasher) };
}

interface Tally {
  entries: number;
  files: number;
  directories: number;
  symlinks: number;
  fileBytes: number;
  skipped: string[];
  changed: string[];
}

async function produce(root: string, pack: Pack, excluded: ReturnType<typeof createExcludeMatcher>, tally: Tally): Promise<void> {
  const rootStats = await stat(root).catch(() => null);
  if (rootStats === null) throw new NotFoundError({ message: "folder to pack does not exist", context: { dir: root } });
  if (!rootStats.isDirectory()) throw new InvalidRequestError({ message: "path to pack is not a folder", context: { dir: root } });
  for await (const { entry, small } of prefetch(walkTree(root, excluded))) {
    const added = await addWalkEntry(pack, entry, small, tally).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    });
    if (added) tally.entries += 1;
  }
  pack.finalize();
}

/** Adds one walked entry; false when it is skipped. ENOENT is only thrown before its header is written. */
async function addWalkEntry(pack: Pack, entry: WalkEntry, small: Promise<SmallFile> | null, tally: Tally): Promise<boolean> {
  const { stats, path } = entry;
  const mtime = new Date(Math.min(Math.max(Math.floor(stats.mtimeMs / 1000), 0), MAX_MTIME_SECONDS) * 1000);
  const header = { name: toMemberName(path, stats.isDirectory()), mode: stats.mode & 0o7777, mtime, uid: 0, gid: 0 };
  if (stats.isDirectory()) {
    await addEntry(pack, { ...header, type: "directory" });
    tally.directories += 1;
  } else if (stats.isSymbolicLink()) {
    await addEntry(pack, { ...header, type: "symlink", linkname: await readlink(entry.absolute) });
    tally.symlinks += 1;
  } else if (stats.isFile()) {
    tally.fileBytes += await addFile(pack, entry, header, small, tally);
    tally.files += 1;
  } else {
    tally.skipped.push(header.name);
    return false;
  }
  return true;
}

async function addFile(pack: Pack, entry: WalkEntry, header: HeaderArgument, small: Promise<SmallFile> | null, tally: Tally): Promise<number> {
  if (small !== null) {
    const { content, changed } = await small;
    if (changed) tally.changed.push(header.name);
    await addEntry(pack, { ...header, type: "file", size: content.length }, content);
    return content.length;
  }
  const size = entry.stats.size;
  const handle = await openForRead(entry.absolute);
  try {
    const changed = await new Promise<boolean>((resolveEntry, reject) => {
      let fileChanged = false;
      const sink = pack.entry({ ...header, type: "file", size }, (error) => (error ? reject(error) : resolveEntry(fileChanged)));
      sink.on("error", () => undefined);
      const entrySink = sink as unknown as EntrySink;
      streamFile(handle, size, entrySink)
        .then((result) => {
          fileChanged = result;
          entrySink.end();
        })
        .catch((error: unknown) => {
          sink.destroy(error as Error);
          reject(error);
        });
    });
    if (changed) tally.changed.push(header.name);
  } finally {
    await handle.close();
  }
  return size;
}

function addEntry(pack: Pack, header: HeaderArgument, content?: Buffer): Promise<void> {
  return new Promise((resolveEntry, reject) => {
    const callback = (error?: Error | null) => (error ? reject(error) : resolveEntry());
    const sink = content === undefined ? pack.entry(header, callback) : pack.entry(header, content, callback);
    // A destroyed pack destroys its sinks; the failure reaches us through the callback.
    sink.on("error", () => undefined);
  });
}

/** Starts reading the next few small files while earlier entries are packed; order is unchanged. */
async function* prefetch(entries: AsyncIterable<WalkEntry>): AsyncGenerator<{ entry: WalkEntry; small: Promise<SmallFile> | null }> {
  const queue: { entry: WalkEntry; small: Promise<SmallFile> | null }[] = [];
  for await (const entry of entries) {
    const isSmall = entry.stats.isFile() && entry.stats.size <= SMALL_FILE_BYTES;
    const small = isSmall ? readSmallFile(entry.absolute, entry.stats.size) : null;
    small?.catch(() => undefined);
    queue.push({ entry, small });
    if (queue.length >= PREFETCH_FILES) yield queue.shift() as (typeof queue)[number];
  }
  yield* queue;
}
