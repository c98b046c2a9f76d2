import { createHash } from "node:crypto";
import { copyBounded } from "./bounded-copy.js";
import { openTemporaryFile } from "./temporary-file.js";

/** Read and write chunk size: small enough that chunks awaiting collection stay a few MiB in all. */
const SPOOL_CHUNK_BYTES = 256 * 1024;

/** A temporary file holding one archive, hashed while it was written. */
export interface Spool {
  /** Appends a stream, hashing as it goes; throws `limit_exceeded` past `maxBytes` total. */
  append(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<void>;
  /** Ends appending and returns the digest of everything appended (the file stays readable until {@link dispose}). */
  finish(): Promise<{ readonly sha256: string; readonly size: number }>;
  /** A fresh web stream over the spooled bytes. */
  read(): ReadableStream<Uint8Array>;
  /** Closes the file, which removes it. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Archives pass through disk, not memory: the driver never holds more than a stream chunk of an
 * archive, whatever the workspace size. The file has no name while it is written and read (see
 * {@link openTemporaryFile}), so a driver that dies leaves none behind.
 */
export async function createSpool(options: {
  readonly maxBytes: number;
  readonly directory?: string;
  readonly onBytes?: (total: number) => void;
}): Promise<Spool> {
  const file = await openTemporaryFile(options.directory);
  const hash = createHash("sha256");
  let size = 0;
  let finished: { sha256: string; size: number } | null = null;

  return {
    async append(stream, signal) {
      size = await copyBounded(
        stream,
        { startBytes: size, maxBytes: options.maxBytes, signal },
        async (value, total) => {
          hash.update(value);
          options.onBytes?.(total);
          // The chunk lands right after everything appended before it.
          await file.writeAt(value, total - value.byteLength);
        },
      );
    },
    async finish() {
      finished ??= { sha256: hash.digest("hex"), size };
      return finished;
    },
    read: () => file.stream(SPOOL_CHUNK_BYTES),
    dispose: () => file.close(),
  };
}

/** Hashes a stream without keeping it. */
export async function hashStream(
  stream: ReadableStream<Uint8Array>,
): Promise<{ readonly sha256: string; readonly size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hash.digest("hex"), size };
}
