/** Reads exact byte counts from an async iterable of chunks, keeping any remainder for the next read. */
export interface ByteReader {
  /** Resolves with chunks totalling exactly `length` bytes; rejects when the source ends first. */
  read(length: number): Promise<Buffer[]>;
}

/** Wraps an entry body (or any async iterable of Buffers) in a {@link ByteReader}. */
export function createByteReader(source: AsyncIterable<unknown>): ByteReader {
  const iterator = source[Symbol.asyncIterator]();
  let leftover: Buffer | null = null;
  return {
    async read(length) {
      const chunks: Buffer[] = [];
      let missing = length;
      while (missing > 0) {
        let chunk = leftover;
        leftover = null;
        if (chunk === null) {
          const next = await iterator.next();
          if (next.done) throw new Error("entry body ended early");
          chunk = next.value as Buffer;
        }
        if (chunk.length > missing) {
          leftover = chunk.subarray(missing);
          chunk = chunk.subarray(0, missing);
        }
        chunks.push(chunk);
        missing -= chunk.length;
      }
      return chunks;
    },
  };
}
