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
 * contents is cut back into its contents without copying a content that lies within one chunk.
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
      const parts: Buffer[] = [];
      let got = 0;
      for await (const slice of chunks(size)) {
        parts.push(slice);
        got += slice.byteLength;
      }
      return got === size ? Buffer.concat(parts, size) : null;
    },
    chunks,
    async atEnd() {
      return !(await fill());
    },
  };
}
