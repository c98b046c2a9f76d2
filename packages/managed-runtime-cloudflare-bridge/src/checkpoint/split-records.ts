/** Options of {@link splitRecords} and {@link forEachRecord}. */
export interface SplitOptions {
  readonly separator: number;
  readonly maxBytes: number;
  readonly terminated: boolean;
  readonly refuse: (reason: string) => Error;
}

/**
 * The splitting both readers share, one record at a time: `next()` finds the next record of the chunk at hand
 * and leaves its range in `bytes`, `start` and `end` (a record a chunk boundary cut is joined into a buffer of
 * its own); false means the chunk is used up and the next one is due (`push`). At most one remainder is held.
 */
function createSplitter(options: SplitOptions) {
  let rest: Buffer = Buffer.alloc(0);
  let chunk: Buffer = Buffer.alloc(0);
  let from = 0;
  const state = {
    bytes: chunk,
    start: 0,
    end: 0,
    push(next: Uint8Array): void {
      chunk = Buffer.from(next.buffer, next.byteOffset, next.byteLength);
      from = 0;
    },
    next(): boolean {
      const end = chunk.indexOf(options.separator, from);
      if (end === -1) {
        // The chunk's tail starts the next record: copied, so it never pins the whole chunk it came from.
        rest =
          rest.byteLength > 0
            ? Buffer.concat([rest, chunk.subarray(from)])
            : Buffer.from(chunk.subarray(from));
        if (rest.byteLength > options.maxBytes) throw options.refuse("record too long");
        chunk = EMPTY;
        from = 0;
        return false;
      }
      if (rest.byteLength > 0) {
        state.bytes = Buffer.concat([rest, chunk.subarray(from, end)]);
        state.start = 0;
        state.end = state.bytes.byteLength;
        rest = EMPTY;
      } else {
        state.bytes = chunk;
        state.start = from;
        state.end = end;
      }
      if (state.end - state.start > options.maxBytes) throw options.refuse("record too long");
      from = end + 1;
      return true;
    },
    /** After the last chunk: whether an unterminated last record is left (refused when `terminated`). */
    last(): boolean {
      if (rest.byteLength === 0) return false;
      if (options.terminated) throw options.refuse("unterminated record");
      state.bytes = rest;
      state.start = 0;
      state.end = rest.byteLength;
      rest = EMPTY;
      return true;
    },
  };
  return state;
}

const EMPTY = Buffer.alloc(0);

/**
 * Splits a byte stream into the records between `separator` bytes, holding at most one record and one
 * chunk: listings and manifests are read as they arrive, never whole. A record longer than `maxBytes`
 * (or a stream not ending in the separator, when `terminated`) is refused through `refuse`.
 */
export async function* splitRecords(
  source: AsyncIterable<Uint8Array>,
  options: SplitOptions,
): AsyncGenerator<Buffer> {
  const splitter = createSplitter(options);
  for await (const chunk of source) {
    splitter.push(chunk);
    while (splitter.next()) yield splitter.bytes.subarray(splitter.start, splitter.end);
  }
  if (splitter.last()) yield splitter.bytes;
}

/**
 * Calls `visit` with each record as a range of the chunk it lies in, with the limits of {@link splitRecords}
 * but no object and no await per record: for scans over every line of a large manifest, where those were
 * most of the cost. A visit that returns a promise is awaited before the next record (the chunk stays as it
 * is until then), so the few records that need an await get one and the rest none.
 */
export async function forEachRecord(
  source: AsyncIterable<Uint8Array>,
  options: SplitOptions,
  visit: (bytes: Buffer, start: number, end: number) => void | Promise<void>,
): Promise<void> {
  const splitter = createSplitter(options);
  for await (const chunk of source) {
    splitter.push(chunk);
    while (splitter.next()) {
      const pending = visit(splitter.bytes, splitter.start, splitter.end);
      if (pending) await pending;
    }
  }
  if (splitter.last()) await visit(splitter.bytes, splitter.start, splitter.end);
}

/** The order of entries in a manifest: bytes of `path + "//"`, which is also `LC_ALL=C sort` order of the sandbox's records. */
export function pathKey(path: string): Buffer {
  return Buffer.from(`${path}//`);
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * `Buffer.compare(pathKey(a), pathKey(b))` without the buffers: for ASCII paths (nearly all) UTF-16 order is
 * byte order, so the keys compare as strings; any other path takes the buffers.
 */
export function comparePaths(a: string, b: string): number {
  if (NON_ASCII.test(a) || NON_ASCII.test(b)) return Buffer.compare(pathKey(a), pathKey(b));
  const left = `${a}//`;
  const right = `${b}//`;
  return left < right ? -1 : left > right ? 1 : 0;
}

const SLASH = 0x2f;

/**
 * `Buffer.compare(pathKey(a), pathKey(b))` for paths given as ranges of UTF-8 bytes, without building the
 * keys. A loop in JavaScript: paths are short, and a native compare per line cost more in its call.
 */
export function compareKeys(
  a: Buffer,
  aStart: number,
  aEnd: number,
  b: Buffer,
  bStart: number,
  bEnd: number,
): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  const shared = Math.min(aLength, bLength);
  for (let index = 0; index < shared; index += 1) {
    const left = a[aStart + index] as number;
    const right = b[bStart + index] as number;
    if (left !== right) return left < right ? -1 : 1;
  }
  if (aLength === bLength) return 0;
  // One is a prefix of the other: the shorter goes on with "//", the longer with its own next bytes (no
  // path holds "//", so the second of them settles it).
  const [longer, longerStart, sign] = aLength > bLength ? [a, aStart, 1] : [b, bStart, -1];
  const first = longer[longerStart + shared] as number;
  if (first !== SLASH) return first > SLASH ? sign : -sign;
  const second =
    shared + 1 < Math.max(aLength, bLength) ? (longer[longerStart + shared + 1] as number) : SLASH;
  return second >= SLASH ? sign : -sign;
}
