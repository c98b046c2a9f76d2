/** One part read from a stream: `bytes` is a view of `buffer`, and `done` marks the stream's end. */
export interface StreamPart {
  readonly bytes: Uint8Array;
  readonly buffer: Uint8Array;
  readonly done: boolean;
}

/**
 * Reads a stream in parts of exactly `partSize` bytes (the last may be shorter, or empty when the
 * stream ends on a part boundary), as multipart uploads require. Each part is copied into a buffer
 * from `takeBuffer`, so a caller that hands finished buffers back keeps allocation flat.
 */
export function createPartReader(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  partSize: number,
  takeBuffer: () => Uint8Array = () => new Uint8Array(partSize),
): () => Promise<StreamPart> {
  let leftover: Uint8Array | undefined;
  return async () => {
    const buffer = takeBuffer();
    let filled = 0;
    for (;;) {
      const chunk = leftover ?? (await reader.read()).value;
      leftover = undefined;
      if (chunk === undefined) return { bytes: buffer.subarray(0, filled), buffer, done: true };
      const taken = Math.min(chunk.byteLength, partSize - filled);
      buffer.set(chunk.subarray(0, taken), filled);
      filled += taken;
      if (taken < chunk.byteLength) leftover = chunk.subarray(taken);
      if (filled === partSize) return { bytes: buffer, buffer, done: false };
    }
  };
}
