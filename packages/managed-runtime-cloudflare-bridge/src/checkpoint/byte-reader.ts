/** Reads a byte stream in slices of sizes known in advance. */
export interface ByteReader {
  /** The next `size` bytes as one buffer (a view of the chunk when it holds them all); null when the stream ends first. */
  read(size: number): Promise<Buffer | null>;
  /** The next `size` bytes as chunks, as they arrive; stops early (fewer bytes in all) when the stream ends first. */
  chunks(size: number): AsyncGenerator<Buffer>;
  /** Whether the stream has no byte left. */
  atEnd(): Promise<boolean>;
}

const EMPTY = Buffer.alloc(0);

/**
 * A reader over chunks (a Node readable, say), holding at most the chunk being sliced: a concatenation of
 * contents is cut back into its contents without copying a content that lies within one chunk. Slices are
 * views: valid until the next read when the source reuses its buffers, so a caller copies what it keeps.
 */
export function createByteReader(source: AsyncIterable<Buffer | Uint8Array>): ByteReader {
  const iterator = source[Symbol.asyncIterator]();
  let head: Buffer = EMPTY;
  let ended = false;

  const fill = async (): Promise<boolean> => {
    while (head.byteLength === 0) {
      if (ended) return false;
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        return false;
      }
      head = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    }
    return true;
  };

  const take = (size: number): Buffer => {
    const slice = head.subarray(0, size);
    head = head.subarray(slice.byteLength);
    return slice;
  };

  async function* chunks(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0 && (await fill())) {
      const slice = take(left);
      left -= slice.byteLength;
      yield slice;
    }
  }

  return {
    async read(size) {
      if (size === 0) return EMPTY;
      if (!(await fill())) return null;
      if (head.byteLength >= size) return take(size);
      // Copied as it arrives: a chunk may be a view of a buffer its source reuses for the next one.
      const whole = Buffer.allocUnsafe(size);
      let got = 0;
      for await (const slice of chunks(size)) {
        whole.set(slice, got);
        got += slice.byteLength;
      }
      return got === size ? whole : null;
    },
    chunks,
    async atEnd() {
      return !(await fill());
    },
  };
}
