/** Reads a byte stream in slices of sizes known in advance, counting what it consumed. */
export interface ByteReader {
  /** Bytes consumed so far (read, skipped or drained). */
  readonly position: number;
  /** The next `size` bytes as one buffer (a view of the chunk when it holds them all); null when the stream ends first. */
  read(size: number): Promise<Buffer | null>;
  /** The next `size` bytes as a view, without a wait, when the chunk at hand holds them all; else null, consuming nothing. */
  readNow(size: number): Buffer | null;
  /** The next `size` bytes as chunks, as they arrive; stops early (fewer bytes in all) when the stream ends first. */
  chunks(size: number): AsyncGenerator<Buffer>;
  /** Discards the next `size` bytes; answers how many there were (fewer when the stream ends first). */
  skip(size: number): Promise<number>;
  /** Reads the rest of the stream and discards it. */
  drain(): Promise<void>;
  /** Whether the stream has no byte left. */
  atEnd(): Promise<boolean>;
  /**
   * Stops reading: the source's iterator is returned (a generator runs its cleanup, a process behind it is
   * ended), and every later read finds the end. Call it when leaving before the end, as on a refusal.
   */
  close(): Promise<void>;
}

const EMPTY = Buffer.alloc(0);

/**
 * A reader over chunks (a Node readable, say), holding at most the chunk being sliced: a concatenation of
 * contents or tar members is cut back into its pieces without copying a piece that lies within one chunk.
 * Slices are views: valid until the next read when the source reuses its buffers, so a caller copies what it
 * keeps. Hand-written for that per-slice cost: a stream per slice dominated reading 200,000 small members.
 */
export function createByteReader(source: AsyncIterable<Buffer | Uint8Array>): ByteReader {
  const iterator = source[Symbol.asyncIterator]();
  let head: Buffer = EMPTY;
  let ended = false;
  let position = 0;

  /** Ensures `head` holds at least one byte; false at the end of the source. */
  const fill = async (): Promise<boolean> => {
    while (head.byteLength === 0) {
      if (ended) return false;
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        return false;
      }
      head = Buffer.isBuffer(next.value)
        ? next.value
        : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    }
    return true;
  };

  const take = (size: number): Buffer => {
    const slice = head.subarray(0, size);
    head = head.subarray(slice.byteLength);
    position += slice.byteLength;
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
    get position() {
      return position;
    },
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
    readNow(size) {
      return head.byteLength >= size ? take(size) : null;
    },
    chunks,
    async skip(size) {
      let skipped = 0;
      while (skipped < size && (await fill())) skipped += take(size - skipped).byteLength;
      return skipped;
    },
    async drain() {
      take(head.byteLength);
      while (!ended) {
        const next = await iterator.next();
        if (next.done) ended = true;
        else position += next.value.byteLength;
      }
    },
    async atEnd() {
      return !(await fill());
    },
    async close() {
      head = EMPTY;
      if (ended) return;
      ended = true;
      await iterator.return?.();
    },
  };
}
