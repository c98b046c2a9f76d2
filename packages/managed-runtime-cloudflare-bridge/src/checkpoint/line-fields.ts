/**
 * Reads the fields a scan of a /3 manifest needs (path, size, hash, pack) from one line where it lies in its
 * chunk, with no object or string per line: a scan over 200,000 lines spent most of its time on the strings,
 * views and native calls of a general reader. Lines as this driver writes them (see `wireLine`) are read
 * in one pass of byte checks; any other line falls back to a field search that takes the fields in any
 * order. Both say nothing about validity beyond what they read: the manifest is hash-checked as it streams
 * and strictly parsed by any restore.
 */

/** What {@link readLineFields} found; one object, overwritten by every call. */
export interface LineFields {
  /** The line's kind by its `type`: a file, a pack declaration, or another entry (directory, symlink). */
  kind: "file" | "pack" | "entry";
  /** Where the path's bytes lie: in the line itself, or in a buffer of its own when its JSON held an escape. */
  pathBytes: Buffer;
  pathStart: number;
  pathEnd: number;
  /** A file's or pack's size. */
  size: number;
  /** Where a file's or pack's 64 hex digits of sha256 start in the line's buffer, or -1. */
  shaAt: number;
  /** The pack index a file names, or -1 for a file in a blob of its own. */
  pack: number;
  /** The offset in its pack of a packed file. */
  offset: number;
}

const fields: LineFields = {
  kind: "entry",
  pathBytes: Buffer.alloc(0),
  pathStart: 0,
  pathEnd: 0,
  size: 0,
  shaAt: -1,
  pack: -1,
  offset: 0,
};

/** Literals as arrays of numbers: compared in a loop, they are read several times faster than a Buffer's bytes. */
function bytesOf(text: string): readonly number[] {
  return [...Buffer.from(text)];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE = 0x7d;
const FILE_HEAD = bytesOf('{"type":"file","path":"');
const AFTER_PATH = bytesOf('","mode":');
const MTIME = bytesOf(',"mtime":');
const SIZE = bytesOf(',"size":');
const SHA = bytesOf(',"sha256":"');
const PACK_AFTER_SHA = bytesOf('","pack":');
const OFFSET = bytesOf(',"offset":');

const TYPE_PACK = bytesOf('{"type":"pack",');
const TYPE_FILE = bytesOf('{"type":"file",');
const PATH_FIELD = Buffer.from('"path":"');
const SIZE_FIELD = Buffer.from('"size":');
const SHA_FIELD = Buffer.from('"sha256":"');
const PACK_FIELD = Buffer.from('"pack":');
const OFFSET_FIELD = Buffer.from('"offset":');

/**
 * The fields of the line at `start`–`end` of `bytes`. Throws `refuse(reason)` when a line lacks what its
 * kind must hold (a path, a size, a hash).
 */
export function readLineFields(
  bytes: Buffer,
  start: number,
  end: number,
  refuse: (reason: string) => Error,
): LineFields {
  if (readWrittenFileLine(bytes, start, end)) return fields;
  fields.pathBytes = bytes;
  fields.shaAt = -1;
  fields.pack = -1;
  if (startsWith(bytes, start, end, TYPE_PACK)) {
    fields.kind = "pack";
    fields.size = numberAfter(bytes, start, end, SIZE_FIELD, refuse);
    fields.shaAt = shaAt(bytes, start, end, refuse);
    return fields;
  }
  readPath(bytes, start, end, refuse);
  if (!startsWith(bytes, start, end, TYPE_FILE)) {
    fields.kind = "entry";
    return fields;
  }
  fields.kind = "file";
  fields.size = numberAfter(bytes, start, end, SIZE_FIELD, refuse);
  if (fields.size > 0) fields.shaAt = shaAt(bytes, start, end, refuse);
  if (fieldAt(bytes, start, end, PACK_FIELD) !== -1) {
    fields.pack = numberAfter(bytes, start, end, PACK_FIELD, refuse);
    fields.offset = numberAfter(bytes, start, end, OFFSET_FIELD, refuse);
  }
  return fields;
}

/** A file line exactly as `wireLine` writes it, path without escapes; false for anything else. */
function readWrittenFileLine(bytes: Buffer, start: number, end: number): boolean {
  if (!startsWith(bytes, start, end, FILE_HEAD)) return false;
  const pathStart = start + FILE_HEAD.length;
  let at = pathStart;
  while (at < end && bytes[at] !== QUOTE) {
    if (bytes[at] === BACKSLASH) return false;
    at += 1;
  }
  const pathEnd = at;
  if (!startsWith(bytes, at, end, AFTER_PATH)) return false;
  at = digitsEnd(bytes, at + AFTER_PATH.length, end);
  if (at === -1 || !startsWith(bytes, at, end, MTIME)) return false;
  at = digitsEnd(bytes, at + MTIME.length, end);
  if (at === -1 || !startsWith(bytes, at, end, SIZE)) return false;
  const sizeAt = at + SIZE.length;
  at = digitsEnd(bytes, sizeAt, end);
  if (at === -1 || !startsWith(bytes, at, end, SHA)) return false;
  const sha = at + SHA.length;
  at = sha + 64;
  let pack = -1;
  let offset = 0;
  // A blob file's line ends right after its hash; a packed file's names its pack and offset.
  if (at + 2 !== end || bytes[at] !== QUOTE || bytes[at + 1] !== CLOSE) {
    if (!startsWith(bytes, at, end, PACK_AFTER_SHA)) return false;
    const packAt = at + PACK_AFTER_SHA.length;
    at = digitsEnd(bytes, packAt, end);
    if (at === -1 || !startsWith(bytes, at, end, OFFSET)) return false;
    const offsetAt = at + OFFSET.length;
    at = digitsEnd(bytes, offsetAt, end);
    if (at === -1 || at + 1 !== end || bytes[at] !== CLOSE) return false;
    pack = numberAt(bytes, packAt);
    offset = numberAt(bytes, offsetAt);
  }
  fields.kind = "file";
  fields.pathBytes = bytes;
  fields.pathStart = pathStart;
  fields.pathEnd = pathEnd;
  fields.size = numberAt(bytes, sizeAt);
  fields.shaAt = sha;
  fields.pack = pack;
  fields.offset = offset;
  return true;
}

/** The path of an entry line; its `path` field is always second, right after `type`. */
function readPath(
  bytes: Buffer,
  start: number,
  end: number,
  refuse: (reason: string) => Error,
): void {
  const field = fieldAt(bytes, start, end, PATH_FIELD);
  if (field === -1) throw refuse("an entry without a path");
  const pathStart = field + PATH_FIELD.byteLength;
  for (let at = pathStart; at < end; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      fields.pathBytes = bytes;
      fields.pathStart = pathStart;
      fields.pathEnd = at;
      return;
    }
    if (byte === BACKSLASH) {
      const decoded = (parseLine(bytes, start, end, refuse) as { path?: unknown } | null)?.path;
      if (typeof decoded !== "string") break;
      fields.pathBytes = Buffer.from(decoded);
      fields.pathStart = 0;
      fields.pathEnd = fields.pathBytes.byteLength;
      return;
    }
  }
  throw refuse("an entry without a path");
}

function startsWith(bytes: Buffer, at: number, end: number, prefix: readonly number[]): boolean {
  const length = prefix.length;
  if (end - at < length) return false;
  for (let index = 0; index < length; index += 1)
    if (bytes[at + index] !== prefix[index]) return false;
  return true;
}

/** Where the run of decimal digits at `at` ends (at most 15: a safe integer), or -1 when there is none. */
function digitsEnd(bytes: Buffer, at: number, end: number): number {
  let index = at;
  while (index < end && index - at < 16) {
    const byte = bytes[index] as number;
    if (byte < 0x30 || byte > 0x39) break;
    index += 1;
  }
  return index === at || index - at > 15 ? -1 : index;
}

function numberAt(bytes: Buffer, at: number): number {
  let value = 0;
  for (let index = at; ; index += 1) {
    const byte = bytes[index] ?? 0;
    if (byte < 0x30 || byte > 0x39) return value;
    value = value * 10 + (byte - 0x30);
  }
}

/** Where `field` starts within the line, or -1. */
function fieldAt(bytes: Buffer, start: number, end: number, field: Buffer): number {
  const at = bytes.indexOf(field, start);
  return at === -1 || at + field.byteLength > end ? -1 : at;
}

/** The non-negative integer right after `field` in the line. */
function numberAfter(
  bytes: Buffer,
  start: number,
  end: number,
  field: Buffer,
  refuse: (reason: string) => Error,
): number {
  const at = fieldAt(bytes, start, end, field);
  const digits = at === -1 ? -1 : digitsEnd(bytes, at + field.byteLength, end);
  if (digits === -1) throw refuse(`a line without ${field.toString("latin1")}`);
  return numberAt(bytes, at + field.byteLength);
}

function shaAt(
  bytes: Buffer,
  start: number,
  end: number,
  refuse: (reason: string) => Error,
): number {
  const at = fieldAt(bytes, start, end, SHA_FIELD);
  if (at === -1 || at + SHA_FIELD.byteLength + 64 > end) throw refuse("a content without a hash");
  return at + SHA_FIELD.byteLength;
}

/** The line as JSON; a line that is not JSON is refused through `refuse`. */
export function parseLine(
  bytes: Buffer,
  start: number,
  end: number,
  refuse: (reason: string) => Error,
): unknown {
  try {
    return JSON.parse(bytes.toString("utf8", start, end));
  } catch {
    throw refuse("a line that is not JSON");
  }
}
