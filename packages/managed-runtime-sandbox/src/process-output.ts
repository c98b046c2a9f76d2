/** Bytes of process output kept for an error message. */
export const OUTPUT_TAIL_BYTES = 4_096;

/** Keeps only the last bytes of a byte stream; memory stays bounded however much a process prints. */
export interface ByteTail {
  push(chunk: Uint8Array): void;
  /** The kept bytes as text; invalid UTF-8 becomes U+FFFD. */
  text(): string;
}

/** Creates a {@link ByteTail} of `limit` bytes. */
export function createByteTail(limit: number = OUTPUT_TAIL_BYTES): ByteTail {
  let kept = new Uint8Array(0);
  return {
    push(chunk) {
      if (chunk.byteLength >= limit) {
        kept = chunk.slice(chunk.byteLength - limit);
        return;
      }
      const keepOld = Math.min(kept.byteLength, limit - chunk.byteLength);
      const next = new Uint8Array(keepOld + chunk.byteLength);
      next.set(kept.subarray(kept.byteLength - keepOld), 0);
      next.set(chunk, keepOld);
      kept = next;
    },
    text: () => new TextDecoder().decode(kept),
  };
}

/** Reads a stream to its end, handing each chunk to `onChunk`; a throwing `onChunk` cancels the stream. */
export async function drainStream(
  stream: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onChunk(value);
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}
