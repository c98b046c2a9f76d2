import {
  IntegrityError,
  SandboxFailedError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { isKeptMode, nameProblem } from "@open-managed-agents/workspace-archive";
import * as z from "zod";
import {
  type ManifestEntry,
  type PackRef,
  fileEntry,
  packSchema,
  relativePath,
  wireEntrySchema,
} from "./manifest.js";
import { comparePaths, splitRecords } from "./split-records.js";

/** Format tag of a manifest stored as one JSON record a line (NDJSON), written and read as a stream. */
export const MANIFEST_FORMAT_V3 = "oma-workspace-manifest/3";
/** The first line of every /3 manifest, byte for byte. */
export const MANIFEST_V3_HEADER = `{"format":"${MANIFEST_FORMAT_V3}"}\n`;

/**
 * Longest line a /3 manifest may hold: a path and a link target of 4096 bytes each, every byte a control
 * character JSON spells in six (`\u0001`), with the other fields.
 */
export const MAX_LINE_BYTES = 64 * 1024;
/** Lines joined into one chunk of output. */
const CHUNK_LINES = 2048;

const packLineSchema = packSchema.extend({ type: z.literal("pack") }).strict();
const removedLineSchema = z.object({ type: z.literal("removed"), path: relativePath }).strict();

/** A path a delta manifest (/4) removes from its base. */
export interface RemovedPath {
  readonly type: "removed";
  readonly path: string;
}
/** One line's item: an entry, or (in a delta manifest only) a removed path. */
export type ManifestItem = ManifestEntry | RemovedPath;

/** Turns items (in `pathKey` order, each at most once) into /3 lines one item at a time. */
export interface ManifestLineEncoder {
  /** The lines `item` adds: a pack's declaration before its first use, then the item's own line. */
  encode(item: ManifestItem): string[];
}

/**
 * The line encoding of /3 manifests: each entry a line, a pack declared by a line of its own before its
 * first use and named by its index after; an item out of order is `sandbox_failed`. Removed paths (a delta's)
 * are encoded too; only delta manifests hold them.
 */
export function createManifestLineEncoder(): ManifestLineEncoder {
  const packs = new Map<string, number>();
  let previous: string | null = null;
  return {
    encode(entry) {
      if (previous !== null && comparePaths(previous, entry.path) >= 0)
        throw new SandboxFailedError({
          message: "workspace entries are out of order",
          context: { path: entry.path.slice(0, 256) },
        });
      previous = entry.path;
      if (entry.type === "removed") return [JSON.stringify({ type: "removed", path: entry.path })];
      if (entry.type !== "file" || !entry.location) return [wireLine(entry)];
      const { location } = entry;
      const index = packs.get(location.pack.sha256);
      if (index !== undefined) return [wireLine(entry, { pack: index, offset: location.offset })];
      packs.set(location.pack.sha256, packs.size);
      return [
        packLine(location.pack),
        wireLine(entry, { pack: packs.size - 1, offset: location.offset }),
      ];
    },
  };
}

/**
 * Writes entries (in `pathKey` order, each at most once) as /3 lines: the header, then each entry, a
 * pack declared by a line of its own before its first use and named by its index after. Yields chunks of
 * lines, so a manifest of any size is written with one chunk in memory. A delta manifest passes its own
 * header line and may hold removed paths.
 */
export async function* encodeManifestLines(
  entries: AsyncIterable<ManifestItem>,
  header = MANIFEST_V3_HEADER.slice(0, -1),
): AsyncGenerator<Buffer> {
  const encoder = createManifestLineEncoder();
  let lines: string[] = [header];
  for await (const entry of entries) {
    for (const line of encoder.encode(entry)) lines.push(line);
    if (lines.length >= CHUNK_LINES) {
      yield Buffer.from(`${lines.join("\n")}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) yield Buffer.from(`${lines.join("\n")}\n`);
}

/**
 * Reads /3 lines as they arrive and yields the entries, each held to the entry schema, strictly in
 * `pathKey` order (so no path twice), a packed file within its declared pack. Anything else is
 * `integrity_failed`. The caller checks the bytes' hash (see `openManifest`).
 */
export async function* decodeManifestLines(
  source: AsyncIterable<Uint8Array>,
): AsyncGenerator<ManifestEntry> {
  const header = (json: unknown) => `${JSON.stringify(json)}\n` === MANIFEST_V3_HEADER;
  yield* decodeManifestItems(source, { header, removals: false }) as AsyncGenerator<ManifestEntry>;
}

/**
 * {@link decodeManifestLines} for any line format: `header` accepts or refuses the first line, and
 * `removals` allows removed-path lines (a delta manifest's).
 */
export async function* decodeManifestItems(
  source: AsyncIterable<Uint8Array>,
  format: { readonly header: (json: unknown) => boolean; readonly removals: boolean },
): AsyncGenerator<ManifestItem> {
  const refuse = (reason: string, path?: string) =>
    new IntegrityError({
      message: `checkpoint manifest is malformed: ${reason}`,
      context: path === undefined ? {} : { path: path.slice(0, 256) },
    });
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const packs: PackRef[] = [];
  let previous: string | null = null;
  let header = false;
  for await (const line of splitRecords(source, {
    separator: 0x0a,
    maxBytes: MAX_LINE_BYTES,
    terminated: true,
    refuse,
  })) {
    let json: unknown;
    try {
      json = JSON.parse(decoder.decode(line));
    } catch (error) {
      throw new IntegrityError({
        message: "checkpoint manifest holds a line that is not JSON",
        cause: error,
      });
    }
    if (!header) {
      if (!format.header(json)) throw refuse("not a manifest of the expected format");
      header = true;
      continue;
    }
    const type =
      typeof json === "object" && json !== null ? (json as { type?: unknown }).type : undefined;
    if (type === "pack") {
      const { sha256, size } = parseRecord(packLineSchema, json, {
        record: "checkpoint manifest pack",
        code: "integrity_failed",
      });
      packs.push({ sha256, size });
      continue;
    }
    if (type === "removed" && format.removals) {
      const removed = parseRecord(removedLineSchema, json, {
        record: "checkpoint manifest removal",
        code: "integrity_failed",
      });
      if (previous !== null && comparePaths(previous, removed.path) >= 0)
        throw refuse("entries out of order or repeated", removed.path);
      previous = removed.path;
      yield { type: "removed", path: removed.path };
      continue;
    }
    // The common line takes a hand check that accepts only what the schema accepts; anything it does not
    // accept goes to the schema, which decides and names what is wrong.
    const entry =
      quickEntry(json) ??
      parseRecord(wireEntrySchema, json, {
        record: "checkpoint manifest entry",
        code: "integrity_failed",
      });
    if (previous !== null && comparePaths(previous, entry.path) >= 0)
      throw refuse("entries out of order or repeated", entry.path);
    previous = entry.path;
    if (entry.type !== "file" || (entry.pack === undefined && entry.offset === undefined)) {
      yield entry;
      continue;
    }
    const { pack: index, offset } = entry;
    const pack = index === undefined ? undefined : packs[index];
    if (!pack || offset === undefined || offset + entry.size > pack.size)
      throw refuse("a file placed outside its pack", entry.path);
    yield fileEntry(entry, entry.sha256, { pack, offset });
  }
  if (!header) throw refuse("empty");
}

/** The line declaring a pack; the pack's index is the number of packs declared before it. */
export function packLine(pack: PackRef): string {
  return JSON.stringify({ type: "pack", sha256: pack.sha256, size: pack.size });
}

/**
 * One entry's line, its fields always in the same order (the manifest's bytes are its id): what
 * `JSON.stringify` gives for the entry's fields, built from parts (only the strings need its escaping).
 */
export function wireLine(
  entry: ManifestEntry,
  packed?: { readonly pack: number; readonly offset: number },
): string {
  const head = `{"type":"${entry.type}","path":${JSON.stringify(entry.path)},"mode":${entry.mode},"mtime":${entry.mtime}`;
  if (entry.type === "directory") return `${head}}`;
  if (entry.type === "symlink") return `${head},"target":${JSON.stringify(entry.target)}}`;
  const location = packed ? `,"pack":${packed.pack},"offset":${packed.offset}` : "";
  return `${head},"size":${entry.size},"sha256":${JSON.stringify(entry.sha256)}${location}}`;
}

const SHA256 = /^[0-9a-f]{64}$/;
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;
type WireEntry = ReturnType<typeof wireEntrySchema.parse>;

/**
 * A manifest line checked by hand against {@link wireEntrySchema}, for speed (a schema parse per line was the
 * largest cost of reading a manifest of 200,000 entries). Returns the entry only when every field is
 * certainly valid; null means "ask the schema", never "invalid".
 */
function quickEntry(json: unknown): WireEntry | null {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const line = json as Record<string, unknown>;
  const { type, path, mode, mtime } = line;
  if (
    typeof path !== "string" ||
    path.length === 0 ||
    path.length > 4096 ||
    path.startsWith("/") ||
    path.endsWith("/") ||
    path.includes("//") ||
    DOT_SEGMENT.test(path) ||
    nameProblem(path) !== null
  )
    return null;
  if (typeof mode !== "number" || !isKeptMode(mode)) return null;
  if (typeof mtime !== "number" || !Number.isInteger(mtime) || mtime < 0 || mtime > 2 ** 33)
    return null;
  let keys = 0;
  for (const _ in line) keys += 1;
  if (type === "directory") return keys === 4 ? { type, path, mode, mtime } : null;
  if (type === "symlink") {
    const { target } = line;
    return keys === 5 &&
      typeof target === "string" &&
      target.length > 0 &&
      target.length <= 4096 &&
      nameProblem(target) === null
      ? { type, path, mode, mtime, target }
      : null;
  }
  if (type !== "file") return null;
  const { size, sha256, pack, offset } = line;
  if (
    typeof size !== "number" ||
    !Number.isSafeInteger(size) ||
    size < 0 ||
    typeof sha256 !== "string" ||
    !SHA256.test(sha256)
  )
    return null;
  if (pack === undefined && offset === undefined)
    return keys === 6 ? { type, path, mode, mtime, size, sha256 } : null;
  if (
    typeof pack !== "number" ||
    !Number.isSafeInteger(pack) ||
    pack < 0 ||
    typeof offset !== "number" ||
    !Number.isSafeInteger(offset) ||
    offset < 0 ||
    keys !== 8
  )
    return null;
  return { type, path, mode, mtime, size, sha256, pack, offset };
}
