import type { Hash } from "node:crypto";

/**
 * A pull-based stream of `totalBytes` pseudo-random bytes from an xorshift32 generator: the same
 * seed always yields the same bytes, and only one chunk exists at a time.
 */
export function deterministicStream(
  totalBytes: number,
  seed: number,
  chunkBytes = 64 * 1024,
): ReadableStream<Uint8Array> {
  let state = seed >>> 0 || 1;
  let produced = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= totalBytes) return controller.close();
      const length = Math.min(chunkBytes, totalBytes - produced);
      const words = new Uint32Array(Math.ceil(length / 4));
      for (let index = 0; index < words.length; index += 1) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        words[index] = state >>> 0;
      }
      produced += length;
      controller.enqueue(new Uint8Array(words.buffer, 0, length));
    },
  });
}

/** Passes chunks through unchanged while feeding them to `hash`. */
export function hashingTap(hash: Hash): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      controller.enqueue(chunk);
    },
  });
}

/** A stream of the given text pieces, yielding to the event loop between pieces. */
export function slowTextStream(pieces: readonly string[], delayMs = 5): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const piece = pieces[index];
      index += 1;
      if (piece === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(piece));
    },
  });
}
