import { createReadStream } from "node:fs";
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";

/** Bytes gathered before one write to disk. */
const STAGING_BYTES = 1024 * 1024;
/** Read chunk size of the spool's streams. */
const READ_CHUNK_BYTES = 256 * 1024;

/** A temporary file written by many small appends (see {@link createBufferedSpool}). */
export interface BufferedSpool {
  /** Bytes appended so far. */
  readonly size: number;
  /**
   * Copies `bytes` in; returns a promise only when the staging buffer went to disk (await it), so a run of
   * small appends costs no promise each. Past `maxBytes` in all, `limit_exceeded`.
   */
  write(bytes: Uint8Array): Promise<void> | undefined;
  /** Writes what is staged and closes the file; returns its size. */
  finish(): Promise<number>;
  /** The written bytes as a Node stream (after {@link finish}). */
  read(): NodeJS.ReadableStream;
  /** Deletes the file. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * A spool for output assembled from many small pieces (tar headers and small contents): pieces are copied
 * into one reused 1 MiB buffer and written when it fills, so assembling 200,000 members costs a write per
 * MiB rather than a stream write each.
 */
export async function createBufferedSpool(options: { readonly maxBytes: number; readonly directory?: string }): Promise<BufferedSpool> {
  const directory = await mkdtemp(join(options.directory ?? tmpdir(), "oma-bridge-spool-"));
  const path = join(directory, "spool");
  let handle: FileHandle | null = await open(path, "w");
  const staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
  let staged = 0;
  let size = 0;

  const flush = async () => {
    let written = 0;
    while (written < staged) written += (await (handle as FileHandle).write(staging, written, staged - written)).bytesWritten;
    staged = 0;
  };

  return {
    get size() {
      return size;
    },
    write(bytes) {
      size += bytes.byteLength;
      if (size > options.maxBytes) throw new LimitExceededError({ message: `checkpoint exceeds ${options.maxBytes} bytes`, context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes } });
      if (staged + bytes.byteLength <= STAGING_BYTES) {
        staging.set(bytes, staged);
        staged += bytes.byteLength;
        return undefined;
      }
      return (async () => {
        let offset = 0;
        while (offset < bytes.byteLength) {
          const step = Math.min(STAGING_BYTES - staged, bytes.byteLength - offset);
          staging.set(bytes.subarray(offset, offset + step), staged);
          staged += step;
          offset += step;
          if (staged === STAGING_BYTES) await flush();
        }
      })();
    },
    async finish() {
      if (handle) {
        await flush();
        await handle.close();
        handle = null;
      }
      return size;
    },
    read() {
      return createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
    },
    async dispose() {
      await handle?.close().catch(() => undefined);
      handle = null;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
