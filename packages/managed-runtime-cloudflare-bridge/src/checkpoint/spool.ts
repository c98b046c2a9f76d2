import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { Readable } from "node:stream";
import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";

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
  const file = createWriteStream(path, { highWaterMark: 1024 * 1024 });
  let size = 0;
  let finished: { sha256: string; size: number } | null = null;
  const opened = new Promise<void>((resolve, reject) => file.once("open", () => resolve()).once("error", reject));
  await opened;

  return {
    path,
    async append(stream, signal) {
      const reader = stream.getReader();
      try {
        for (;;) {
          if (signal?.aborted) throw signal.reason;
          const { value, done } = await reader.read();
          if (done) return;
          size += value.byteLength;
          if (size > options.maxBytes) {
            throw new LimitExceededError({ message: `checkpoint exceeds ${options.maxBytes} bytes`, context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes } });
          }
          hash.update(value);
          options.onBytes?.(size);
          if (!file.write(value)) await once(file, "drain");
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    },
    async finish() {
      if (!finished) {
        await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
        finished = { sha256: hash.digest("hex"), size };
      }
      return finished;
    },
    read() {
      return Readable.toWeb(createReadStream(path, { highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>;
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
