import { type Hash, createHash } from "node:crypto";
import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";
import { openTemporaryFile } from "./temporary-file.js";

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
  /**
   * {@link write} for text: encoded as UTF-8 straight into the staging buffer (no buffer of its own), unless it
   * is longer than the staging buffer can take at once.
   */
  writeText(text: string): Promise<void> | undefined;
  /** Writes what is staged and ends writing; returns the size (the file stays readable until {@link dispose}). */
  finish(): Promise<number>;
  /** The sha256 of everything written (with `hash`), after {@link finish}. */
  sha256(): string;
  /** The written bytes as a byte stream (after {@link finish}; see `TemporaryFile.stream`). */
  read(): ReadableStream<Uint8Array>;
  /**
   * The written bytes read into one reused buffer (after {@link finish}): each piece is a view, valid until the
   * next is asked for. Reading a spool of hundreds of MiB then allocates one buffer, not one per chunk.
   */
  chunks(): AsyncGenerator<Buffer>;
  /** Closes the file, which removes it. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * A spool for output assembled from many small pieces (tar headers and small contents): pieces are copied
 * into one reused 1 MiB buffer and written when it fills, so assembling 200,000 members costs a write per
 * MiB rather than a stream write each. The file has no name while it is used (see {@link openTemporaryFile}).
 */
export async function createBufferedSpool(options: {
  readonly maxBytes: number;
  readonly directory?: string;
  readonly hash?: boolean;
}): Promise<BufferedSpool> {
  const file = await openTemporaryFile(options.directory);
  const staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
  let staged = 0;
  let size = 0;
  // Bytes already in the file: the staged ones follow them.
  let flushed = 0;
  let open = true;
  const hash: Hash | null = options.hash ? createHash("sha256") : null;
  let digest = "";

  const flush = async () => {
    await file.writeAt(staging.subarray(0, staged), flushed);
    flushed += staged;
    staged = 0;
  };

  const write = (bytes: Uint8Array): Promise<void> | undefined => {
    size += bytes.byteLength;
    if (size > options.maxBytes)
      throw new LimitExceededError({
        message: `checkpoint exceeds ${options.maxBytes} bytes`,
        context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes },
      });
    hash?.update(bytes);
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
  };

  return {
    get size() {
      return size;
    },
    write,
    writeText(text) {
      // UTF-8 takes at most three bytes per UTF-16 unit: when that fits, the text is encoded in place (after the
      // staged bytes went to disk, if need be) and hashed from there.
      if (text.length * 3 > STAGING_BYTES) return write(Buffer.from(text, "utf8"));
      const encode = () => {
        const written = staging.write(text, staged, "utf8");
        size += written;
        if (size > options.maxBytes)
          throw new LimitExceededError({
            message: `checkpoint exceeds ${options.maxBytes} bytes`,
            context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes },
          });
        hash?.update(staging.subarray(staged, staged + written));
        staged += written;
      };
      if (staged + text.length * 3 <= STAGING_BYTES) return void encode();
      return flush().then(encode);
    },
    async finish() {
      if (open) {
        await flush();
        open = false;
        digest = hash?.digest("hex") ?? "";
      }
      return size;
    },
    sha256: () => digest,
    read: () => file.stream(READ_CHUNK_BYTES),
    async *chunks() {
      const buffer = Buffer.allocUnsafeSlow(STAGING_BYTES);
      for (let position = 0; ; ) {
        const { bytesRead } = await file.handle.read(buffer, 0, STAGING_BYTES, position);
        if (bytesRead === 0) return;
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    },
    dispose: () => file.close(),
  };
}
