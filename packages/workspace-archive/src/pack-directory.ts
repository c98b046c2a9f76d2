import { resolve } from "node:path";
import { finished } from "node:stream/promises";
import { pipeline, Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { toWebStream } from "./archive-source.js";
import { IO_CHUNK_BYTES } from "./constants.js";
import { DigestTransform } from "./digest-transform.js";
import { parsePackOptions } from "./options.js";
import { createPackTally, tarChunks } from "./tar-chunks.js";

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
  /** Resolves after the last byte was emitted; rejects when packing fails or the stream is destroyed. */
  readonly digest: Promise<PackDigest>;
  /** The same bytes as a web `ReadableStream` (for `fetch` bodies); use either this or `stream`. */
  toWebStream(): ReadableStream<Uint8Array>;
}

/**
 * Packs `dir` into a tar stream, GNU-tar compatible (`./`, `./a.txt`, `./dir/`), in sorted order so the
 * same tree always gives the same bytes and hash. Regular files, directories and symlinks (kept as links)
 * are stored with their modes and mtimes; owners are recorded as 0. Memory stays bounded: small files
 * are batched into 1 MiB chunks, large ones streamed in 1 MiB reads with one read ahead.
 */
export function packDirectory(dir: string, options: PackDirectoryOptions = {}): PackedDirectory {
  const { excludes, gzipLevel } = parsePackOptions(options);
  if (typeof dir !== "string" || dir.length === 0) throw new InvalidRequestError({ message: "packDirectory needs a folder path" });
  const tally = createPackTally();
  const source = Readable.from(tarChunks(resolve(dir), excludes, tally), { objectMode: false, highWaterMark: IO_CHUNK_BYTES });
  const hasher = new DigestTransform();
  if (gzipLevel === null) pipeline(source, hasher, () => undefined);
  else pipeline(source, createGzip({ level: gzipLevel, chunkSize: 256 * 1024 }), hasher, () => undefined);
  const digest = finished(hasher).then(async () => ({ ...(await hasher.digest), ...tally }));
  digest.catch(() => undefined);
  return { stream: hasher, digest, toWebStream: () => toWebStream(hasher) };
}
