import { resolve } from "node:path";
import { pipeline, Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { DigestTransform, type StreamDigest } from "./digest-transform.js";
import { parsePackOptions } from "./options.js";
import { createTarByteStream, createTarReadable, type DigestSink } from "./pack-streams.js";
import { TarFiller } from "./tar-filler.js";
import { createPackTally, tarSegments } from "./tar-segments.js";

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

/** A streaming archive of a directory, readable once through either `stream` or `toWebStream()`. */
export interface PackedDirectory {
  /** The tar (or tar.gz) bytes as a Node `Readable`. Read it to the end: `digest` settles only then. */
  readonly stream: Readable;
  /** Resolves after the last byte was emitted; rejects when packing fails or the stream is abandoned. */
  readonly digest: Promise<PackDigest>;
  /**
   * The same bytes as a web `ReadableStream`. Without gzip it is a byte stream: a BYOB reader that reuses
   * its buffer gets files read from disk straight into it, the fastest way to consume an archive; its
   * sha256 is computed on a worker thread that ends with the stream.
   */
  toWebStream(): ReadableStream<Uint8Array>;
}

/**
 * Packs `dir` into a tar stream, GNU-tar compatible (`./`, `./a.txt`, `./dir/`), in sorted order so the
 * same tree always gives the same bytes and hash. Regular files, directories and symlinks (kept as links)
 * are stored with their modes and mtimes; owners are recorded as 0. Memory stays bounded: small files
 * are gathered into 1 MiB segments, large files are read piece by piece into the output buffers.
 */
export function packDirectory(dir: string, options: PackDirectoryOptions = {}): PackedDirectory {
  const { excludes, gzipLevel } = parsePackOptions(options);
  if (typeof dir !== "string" || dir.length === 0)
    throw new InvalidRequestError({ message: "packDirectory needs a folder path" });
  const tally = createPackTally();
  const filler = new TarFiller(tarSegments(resolve(dir), excludes, tally));
  let sink: DigestSink = { resolve: () => undefined, reject: () => undefined };
  const digest = new Promise<PackDigest>((resolveDigest, rejectDigest) => {
    sink = {
      resolve: (hashed: StreamDigest) => resolveDigest({ ...hashed, ...tally }),
      reject: rejectDigest,
    };
  });
  digest.catch(() => undefined);
  let opened: "stream" | "web" | null = null;
  let nodeStream: Readable | null = null;
  const claim = (kind: "stream" | "web") => {
    // The getter may be read repeatedly; a second web stream or a mix of both would split the bytes.
    if (opened !== null && (opened !== kind || kind === "web")) {
      throw new InvalidRequestError({
        message: "read a packed directory through either stream or toWebStream(), once",
      });
    }
    opened = kind;
  };
  const openNode = (): Readable => {
    if (nodeStream !== null) return nodeStream;
    if (gzipLevel === null) nodeStream = createTarReadable(filler, sink);
    else {
      const hasher = new DigestTransform();
      pipeline(
        createTarReadable(filler, null),
        createGzip({ level: gzipLevel, chunkSize: 256 * 1024 }),
        hasher,
        () => undefined,
      );
      let hashed: StreamDigest | null = null;
      void hasher.digest.then((result) => (hashed = result));
      // The digest is ready at flush, before `end`; it is reported once the consumer has read everything.
      hasher.once("end", () => hashed && sink.resolve(hashed));
      nodeStream = hasher;
    }
    nodeStream.once("close", () =>
      sink.reject(new Error("archive stream closed before it was read to the end")),
    );
    return nodeStream;
  };
  return {
    get stream() {
      claim("stream");
      return openNode();
    },
    digest,
    toWebStream() {
      claim("web");
      if (gzipLevel !== null)
        return Readable.toWeb(openNode()) as unknown as ReadableStream<Uint8Array>;
      return createTarByteStream(filler, sink);
    },
  };
}
