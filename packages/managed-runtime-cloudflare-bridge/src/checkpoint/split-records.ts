/**
 * Splits a byte stream into the records between `separator` bytes, holding at most one record and one
 * chunk: listings and manifests are read as they arrive, never whole. A record longer than `maxBytes`
 * (or a stream not ending in the separator, when `terminated`) is refused through `refuse`.
 */
export async function* splitRecords(
  source: AsyncIterable<Uint8Array>,
  options: { readonly separator: number; readonly maxBytes: number; readonly terminated: boolean; readonly refuse: (reason: string) => Error },
): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (rest.byteLength > 0) {
      // Only the record the chunk boundary cut is joined: the rest of the chunk is split where it lies.
      const end = bytes.indexOf(options.separator);
      if (end === -1) {
        rest = Buffer.concat([rest, bytes]);
        if (rest.byteLength > options.maxBytes) throw options.refuse("record too long");
        continue;
      }
      const joined = Buffer.concat([rest, bytes.subarray(0, end)]);
      if (joined.byteLength > options.maxBytes) throw options.refuse("record too long");
      rest = Buffer.alloc(0);
      yield joined;
      start = end + 1;
    }
    for (let end = bytes.indexOf(options.separator, start); end !== -1; end = bytes.indexOf(options.separator, start)) {
      if (end - start > options.maxBytes) throw options.refuse("record too long");
      yield bytes.subarray(start, end);
      start = end + 1;
    }
    // Copied, so a retained remainder never pins the whole chunk it came from.
    rest = Buffer.from(bytes.subarray(start));
    if (rest.byteLength > options.maxBytes) throw options.refuse("record too long");
  }
  if (rest.byteLength > 0) {
    if (options.terminated) throw options.refuse("unterminated record");
    yield rest;
  }
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
