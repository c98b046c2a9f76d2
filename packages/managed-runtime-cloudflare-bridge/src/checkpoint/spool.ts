import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { Readable } from "node:stream";
import { copyBounded } from "./bounded-copy.js";

/** Read and write chunk size: small enough that chunks awaiting collection stay a few MiB in all. */
const SPOOL_CHUNK_BYTES = 256 * 1024;

/** A temporary file holding one archive, hashed while it was written. */
export interface Spool {
  readonly path: string;
  /** Appends a stream, hashing as it goes; throws `limit_exceeded` past `maxBytes` total. */
  append(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<void>;
  /** Closes the spool and returns the digest of everything appended. */
  finish(): Promise<{ readonly sha256: string; readonly size: number }>;
  /** A fresh web stream over the spooled bytes. */
  read(): ReadableStream<Uint8Array>;
  /** Deletes the file. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Archives pass through disk, not memory: the driver never holds more than a stream chunk of an
 * archive, whatever the workspace size.
 */
export async function createSpool(options: { readonly maxBytes: number; readonly directory?: string; readonly onBytes?: (total: number) => void }): Promise<Spool> {
  const directory = await mkdtemp(join(options.directory ?? tmpdir(), "oma-bridge-spool-"));
  const path = join(directory, "archive.tar");
  const hash = createHash("sha256");
  const file = createWriteStream(path, { highWaterMark: SPOOL_CHUNK_BYTES });
  let size = 0;
  let finished: { sha256: string; size: number } | null = null;
  const opened = new Promise<void>((resolve, reject) => file.once("open", () => resolve()).once("error", reject));
  await opened;

  return {
    path,
    async append(stream, signal) {
      size = await copyBounded(stream, { startBytes: size, maxBytes: options.maxBytes, signal }, async (value, total) => {
        hash.update(value);
        options.onBytes?.(total);
        if (!file.write(value)) await once(file, "drain");
      });
    },
    async finish() {
      if (!finished) {
        await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
        finished = { sha256: hash.digest("hex"), size };
      }
      return finished;
    },
    read() {
      return Readable.toWeb(createReadStream(path, { highWaterMark: SPOOL_CHUNK_BYTES })) as ReadableStream<Uint8Array>;
    },
    async dispose() {
      file.destroy();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Hashes a stream without keeping it. */
export async function hashStream(stream: ReadableStream<Uint8Array>): Promise<{ readonly sha256: string; readonly size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hash.digest("hex"), size };
}
