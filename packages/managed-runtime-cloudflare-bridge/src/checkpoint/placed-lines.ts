import type { LineFields } from "./line-fields.js";
import { compareKeys } from "./split-records.js";

/**
 * Reading a /3 manifest's lines by position alone, as `wireLine` and `packLine` lay them out: for a base
 * whose every line a full read found to read alike this way (see `prescanBase`), so nothing is checked here.
 */

/** A line's fields read by position; one object, overwritten by every call. */
export interface PlacedFields {
  /** By the type's first letter; null for a line not laid out as the driver writes them. */
  kind: "file" | "pack" | "entry" | null;
  pathStart: number;
  pathEnd: number;
  /** Where a file's 64 hex digits of sha256 start, or -1. */
  shaAt: number;
}

const placedFields: PlacedFields = { kind: null, pathStart: 0, pathEnd: 0, shaAt: -1 };

const NEWLINE = 0x0a;
const QUOTE = 0x22;
/** Where the path starts, by the first letter of the type. */
const FILE_PATH_AT = '{"type":"file","path":"'.length;
const DIRECTORY_PATH_AT = '{"type":"directory","path":"'.length;
const SYMLINK_PATH_AT = '{"type":"symlink","path":"'.length;
const TYPE_LETTER_AT = '{"type":"'.length;

/**
 * The line's kind (the type's first letter), its path (from its fixed start to the next quote) and a file's
 * hash (found back from the line's end, over a packed file's pack and offset).
 */
export function readPlacedFields(bytes: Buffer, start: number, end: number): PlacedFields {
  const fields = placedFields;
  const letter = bytes[start + TYPE_LETTER_AT];
  fields.kind = null;
  fields.shaAt = -1;
  if (letter === 0x70) {
    fields.kind = "pack";
    return fields;
  }
  const at =
    letter === 0x66
      ? FILE_PATH_AT
      : letter === 0x64
        ? DIRECTORY_PATH_AT
        : letter === 0x73
          ? SYMLINK_PATH_AT
          : -1;
  if (at === -1) return fields;
  const pathEnd = bytes.indexOf(QUOTE, start + at);
  if (pathEnd === -1 || pathEnd >= end) return fields;
  fields.kind = letter === 0x66 ? "file" : "entry";
  fields.pathStart = start + at;
  fields.pathEnd = pathEnd;
  if (letter === 0x66) fields.shaAt = shaBeforeEnd(bytes, start, end);
  return fields;
}

/** Where a file line's hash starts: right before `"}`, or before `","pack":<n>,"offset":<n>}`. */
function shaBeforeEnd(bytes: Buffer, start: number, end: number): number {
  if (bytes[end - 2] === QUOTE) return end - 2 - 64;
  let at = skipDigits(bytes, end - 2, start);
  // `,"offset":` ends at `at`; the pack's digits end right before it.
  at = skipDigits(bytes, at - ',"offset":'.length, start);
  // `","pack":` ends at `at`; the hash ends right before it.
  return at - '","pack":'.length + 1 - 64;
}

function skipDigits(bytes: Buffer, from: number, start: number): number {
  let at = from;
  while (at > start && (bytes[at] as number) >= 0x30 && (bytes[at] as number) <= 0x39) at -= 1;
  return at;
}

/** Whether the placed reading of a line found what the full reader did, in the same bytes. */
export function sameFields(placed: PlacedFields, line: LineFields, bytes: Buffer): boolean {
  if (placed.kind !== line.kind) return false;
  if (line.kind === "pack") return true;
  // A path read from an escape lies in a buffer of its own, which the placed reading cannot see.
  if (
    line.pathBytes !== bytes ||
    line.pathStart !== placed.pathStart ||
    line.pathEnd !== placed.pathEnd
  )
    return false;
  return line.kind !== "file" || line.shaAt === placed.shaAt;
}

/** Where a line lies in its block. */
export interface LineRange {
  readonly start: number;
  readonly end: number;
}

/** The first entry line starting in [`from`, `limit`) (pack declarations passed over); null when none. */
function entryLineFrom(bytes: Buffer, from: number, limit: number): LineRange | null {
  for (let start = from; start < limit; ) {
    // Every whole line ends in a newline.
    const stop = bytes.indexOf(NEWLINE, start);
    if (readPlacedFields(bytes, start, stop).kind !== "pack") return { start, end: stop };
    start = stop + 1;
  }
  return null;
}

/**
 * The entry line at `path` (as UTF-8 bytes) among the whole lines `bytes[0, end)` (each ending in a newline,
 * sorted by path, pack declarations between them), or null where there is none: a binary search by byte
 * position, each probe read from the first line starting at or after it.
 */
export function findLine(bytes: Buffer, end: number, path: Buffer): LineRange | null {
  // The first entry line at or after `path` starts in [low, high); `low` is always a line start.
  let low = 0;
  let high = end;
  while (low < high) {
    const middle = low + ((high - low) >>> 1);
    const from = middle === low ? low : bytes.indexOf(NEWLINE, middle - 1) + 1;
    const line = entryLineFrom(bytes, from, high);
    if (!line) {
      high = middle;
      continue;
    }
    const { pathStart, pathEnd } = readPlacedFields(bytes, line.start, line.end);
    if (compareKeys(bytes, pathStart, pathEnd, path, 0, path.length) < 0) low = line.end + 1;
    else high = line.start;
  }
  const line = entryLineFrom(bytes, low, end);
  if (!line) return null;
  const { pathStart, pathEnd } = readPlacedFields(bytes, line.start, line.end);
  return compareKeys(bytes, pathStart, pathEnd, path, 0, path.length) === 0 ? line : null;
}

/** The path of the last entry line among the whole lines `bytes[0, end)`, as a range; null when there is none. */
export function lastPath(bytes: Buffer, end: number): LineRange | null {
  for (let stop = end - 1; stop > 0; ) {
    const start = bytes.lastIndexOf(NEWLINE, stop - 1) + 1;
    const fields = readPlacedFields(bytes, start, stop);
    if (fields.kind === "file" || fields.kind === "entry")
      return { start: fields.pathStart, end: fields.pathEnd };
    stop = start - 1;
  }
  return null;
}
