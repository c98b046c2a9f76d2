import { createHash } from "node:crypto";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import { throwIfAborted } from "./abort.js";

export { stableJson } from "@open-managed-agents/runtime-utils";

/** A content digest: lowercase sha256 hex and the byte length it covers. */
export interface ContentDigest {
  readonly hex: string;
  readonly size: number;
}

const SHA256_HASH = /^sha256:([0-9a-f]{64})$/;

/** Lowercase sha256 hex of a string (as UTF-8) or of bytes. */
export const sha256Hex: (data: string | Uint8Array) => string = sha256HexSync;

/** The hex part of a `sha256:<hex>` hash, or null when `hash` is not one. */
export function sha256HexOf(hash: string): string | null {
  return SHA256_HASH.exec(hash)?.[1] ?? null;
}

/** Options of {@link digestStream}. */
export interface DigestStreamOptions {
  readonly signal?: AbortSignal;
  /** Called with the running byte count after each chunk; throwing stops the read and cancels the stream. */
  readonly onProgress?: (size: number) => void;
}

/** Hashes a stream chunk by chunk; never holds more than one chunk. */
export async function digestStream(
  stream: ReadableStream<Uint8Array>,
  options: DigestStreamOptions = {},
): Promise<ContentDigest> {
  const hash = createHash("sha256");
  const reader = stream.getReader();
  let size = 0;
  try {
    for (;;) {
      throwIfAborted(options.signal, "digest");
      const { done, value } = await reader.read();
      if (done) break;
      hash.update(value);
      size += value.byteLength;
      options.onProgress?.(size);
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  return { hex: hash.digest("hex"), size };
}

/**
 * Passes `source` through while hashing it. The stream errors with `mismatch()` before it ends when
 * the bytes differ from `expected` (too many bytes, too few, other hash), so a store that commits only
 * fully read bodies never commits the wrong content. `verified()` turns true once the whole body matched.
 */
export function verifyingStream(
  source: ReadableStream<Uint8Array>,
  expected: ContentDigest,
  mismatch: (actual: Partial<ContentDigest>) => Error,
  signal?: AbortSignal,
): { readonly stream: ReadableStream<Uint8Array>; verified(): boolean } {
  const hash = createHash("sha256");
  let size = 0;
  let verified = false;
  const stream = source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > expected.size) throw mismatch({ size });
        hash.update(chunk);
        controller.enqueue(chunk);
      },
      flush() {
        const hex = hash.digest("hex");
        if (size !== expected.size || hex !== expected.hex) throw mismatch({ size, hex });
        verified = true;
      },
    }),
    signal ? { signal } : {},
  );
  return { stream, verified: () => verified };
}
