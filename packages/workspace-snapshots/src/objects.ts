import { createHash } from "node:crypto";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import { isKeptMode } from "@open-managed-agents/workspace-archive";
import * as z from "zod";
import { HEX32, HEX64 } from "./keys.js";

/** The format every object states; an object of any other version is refused. */
export const FORMAT_VERSION = 1;

/** `<seconds>.<nine digits>`: an mtime as the sandbox lists it, to the nanosecond. */
export const MTIME = /^-?\d{1,12}\.\d{9}$/;
export const LINK = /^\d{1,20}$/;
const hex = z.string().regex(HEX64);
const size = z.number().int().nonnegative().refine(Number.isSafeInteger);

/** A regular file: its content by hash, in a pack or a blob of its own. */
export interface FileEntry {
  name: string;
  type: "file";
  mode: number;
  /** `<seconds>.<nine digits>`, to the nanosecond. */
  mtime: string;
  size: number;
  /** SHA-256 of the content; absent only for an empty file. */
  hash?: string;
  /** The pack that holds the content, and where in it; absent for a blob (or an empty file). */
  pack?: string;
  offset?: number;
  /** Files of one snapshot with the same `link` are one file (hard links). */
  link?: string;
}
/** One entry of a tree, sorted by name (see {@link compareNames}); a folder names its own tree. */
export type TreeEntry =
  | FileEntry
  | { name: string; type: "dir"; mode: number; mtime: string; tree: string }
  | { name: string; type: "symlink"; mtime: string; target: string };
/** A folder's tree: its entries, or (past one chunk's worth) the hashes of its chunks in order. */
export type TreeObject =
  | { version: typeof FORMAT_VERSION; entries: TreeEntry[] }
  | { version: typeof FORMAT_VERSION; chunks: string[] };

// Reading a tree checks its rules by hand: a later checkpoint reads every chunk of each changed folder, and
// zod's parse of a chunk (test/tree-schema.ts) costs several times this one (bench/tree-parse.bench.ts).
const FILE_KEYS = ["name", "type", "mode", "mtime", "size", "hash", "pack", "offset", "link"];
const DIR_KEYS = ["name", "type", "mode", "mtime", "tree"];
const SYMLINK_KEYS = ["name", "type", "mtime", "target"];
type Fields = Record<string, unknown>;
const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isName = (value: unknown) =>
  typeof value === "string" &&
  value.length > 0 &&
  value !== "." &&
  value !== ".." &&
  !value.includes("/") &&
  !value.includes("\0");
const isSize = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isMode = (value: unknown) => Number.isSafeInteger(value) && isKeptMode(value as number);
const fits = (value: unknown, pattern: RegExp) => typeof value === "string" && pattern.test(value);
const absentOr = (value: unknown, holds: (value: unknown) => boolean) =>
  value === undefined || holds(value);

/** `entry` with only `keys`, in their order (as zod returns it): itself when already so. */
function inKeyOrder(entry: Fields, keys: readonly string[]): Fields | undefined {
  let last = -1;
  let ordered = true;
  for (const key in entry) {
    const index = keys.indexOf(key);
    if (index < 0) return undefined;
    ordered &&= index > last;
    last = index;
  }
  return ordered
    ? entry
    : Object.fromEntries(keys.filter((key) => key in entry).map((key) => [key, entry[key]]));
}

function treeEntryOf(entry: unknown): Fields | undefined {
  if (!isFields(entry) || !isName(entry.name)) return undefined;
  if (entry.type === "file") {
    const { size, hash, pack, offset } = entry;
    const holds =
      isMode(entry.mode) &&
      fits(entry.mtime, MTIME) &&
      isSize(size) &&
      absentOr(hash, (value) => fits(value, HEX64)) &&
      absentOr(pack, (value) => fits(value, HEX32)) &&
      absentOr(offset, isSize) &&
      absentOr(entry.link, (value) => fits(value, LINK)) &&
      (size === 0) === (hash === undefined) &&
      (pack === undefined) === (offset === undefined);
    return holds ? inKeyOrder(entry, FILE_KEYS) : undefined;
  }
  if (entry.type === "dir")
    return isMode(entry.mode) && fits(entry.mtime, MTIME) && fits(entry.tree, HEX64)
      ? inKeyOrder(entry, DIR_KEYS)
      : undefined;
  if (entry.type === "symlink")
    return fits(entry.mtime, MTIME) && typeof entry.target === "string" && entry.target.length > 0
      ? inKeyOrder(entry, SYMLINK_KEYS)
      : undefined;
  return undefined;
}

/** A parsed tree object when it holds to the format, its entries' keys in order; undefined otherwise. */
export function parseTree(value: unknown): TreeObject | undefined {
  if (!isFields(value) || value.version !== FORMAT_VERSION || Object.keys(value).length !== 2)
    return undefined;
  const { chunks, entries } = value;
  if (Array.isArray(chunks))
    return chunks.length >= 2 && chunks.every((chunk) => fits(chunk, HEX64))
      ? { version: FORMAT_VERSION, chunks }
      : undefined;
  if (!Array.isArray(entries)) return undefined;
  const parsed = entries.map(treeEntryOf);
  return parsed.includes(undefined)
    ? undefined
    : { version: FORMAT_VERSION, entries: parsed as TreeEntry[] };
}

export const snapshotSchema = z
  .object({
    version: z.literal(FORMAT_VERSION),
    session: z.string().regex(HEX32),
    tree: hex,
    parent: hex.nullable(),
    created: z.string().datetime(),
    /** What made the snapshot: free text chosen by the caller (a sandbox id, a reason). */
    source: z.record(z.string().max(64), z.string().max(256)),
    entries: size,
  })
  .strict();
export type SnapshotObject = z.infer<typeof snapshotSchema>;

/** Bytes of an object as stored: JSON whose keys come in the order the objects above are built in. */
export function encodeObject(value: TreeObject | SnapshotObject): {
  readonly bytes: Buffer;
  readonly hash: string;
} {
  const bytes = Buffer.from(JSON.stringify(value), "utf8");
  return { bytes, hash: createHash("sha256").update(bytes).digest("hex") };
}

/** Tree entries compare as their names followed by `/`, bytewise: the order of the sandbox's sorted listing. */
export function compareNames(left: string, right: string): number {
  const shorter = Math.min(left.length, right.length);
  for (let index = 0; index < shorter; index += 1) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a === b) continue;
    // Code units compare as UTF-8 bytes do unless both are surrogates or above (U+E000 sorts below U+10000).
    if (a < 0xd800 || b < 0xd800) return a < b ? -1 : 1;
    return Buffer.compare(Buffer.from(`${left}/`, "utf8"), Buffer.from(`${right}/`, "utf8"));
  }
  if (left.length === right.length) return 0;
  // A name that is the other's start compares as if followed by `/`.
  const next = left.length < right.length ? right.charCodeAt(shorter) : left.charCodeAt(shorter);
  return next < 0x2f === left.length < right.length ? 1 : -1;
}

/** A stored object's bytes checked against the hash its key names, then parsed. */
export function decodeObject<T>(
  parse: (value: unknown) => T | undefined,
  bytes: Uint8Array,
  hash: string,
  what: string,
): T {
  const digest = createHash("sha256").update(bytes).digest("hex");
  if (digest !== hash) {
    throw new IntegrityError({
      message: `snapshot ${what} ${hash} does not match its hash`,
      context: { object: what, hash },
    });
  }
  let parsed: T | undefined;
  try {
    parsed = parse(
      JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString()),
    );
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) {
    throw new IntegrityError({
      message: `snapshot ${what} ${hash} is malformed`,
      context: { object: what, hash },
    });
  }
  return parsed;
}

/** Refuses a tree chunk whose entries are not strictly in {@link compareNames} order. */
export function checkEntryOrder(
  entries: readonly TreeEntry[],
  previous: string | null,
  hash: string,
): string | null {
  let last = previous;
  for (const entry of entries) {
    if (last !== null && compareNames(last, entry.name) >= 0) {
      throw new IntegrityError({
        message: `snapshot tree ${hash} lists its entries out of order`,
        context: { object: "tree", hash },
      });
    }
    last = entry.name;
  }
  return last;
}
