import { IntegrityError, SandboxFailedError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { type ManifestEntry, type PackRef, packSchema, relativePath, wireEntrySchema } from "./manifest.js";
import { pathKey, splitRecords } from "./split-records.js";

/** Format tag of a manifest stored as one JSON record a line (NDJSON), written and read as a stream. */
export const MANIFEST_FORMAT_V3 = "oma-workspace-manifest/3";
/** The first line of every /3 manifest, byte for byte. */
export const MANIFEST_V3_HEADER = `{"format":"${MANIFEST_FORMAT_V3}"}\n`;

/** Longest line a /3 manifest may hold (a path and a link target of 4096 bytes each, with fields). */
const MAX_LINE_BYTES = 16 * 1024;
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

/**
 * Writes entries (in {@link pathKey} order, each at most once) as /3 lines: the header, then each entry, a
 * pack declared by a line of its own before its first use and named by its index after. Yields chunks of
 * lines, so a manifest of any size is written with one chunk in memory. A delta manifest passes its own
 * header line and may hold removed paths.
 */
export async function* encodeManifestLines(entries: AsyncIterable<ManifestItem>, header = MANIFEST_V3_HEADER.slice(0, -1)): AsyncGenerator<Buffer> {
  const packs = new Map<string, number>();
  let lines: string[] = [header];
  let previous: Buffer | null = null;
  for await (const entry of entries) {
    const key = pathKey(entry.path);
    if (previous && Buffer.compare(previous, key) >= 0) throw new SandboxFailedError({ message: "workspace entries are out of order", context: { path: entry.path.slice(0, 256) } });
    previous = key;
    if (entry.type === "removed") lines.push(JSON.stringify({ type: "removed", path: entry.path }));
    else if (entry.type === "file" && entry.location) {
      const { location } = entry;
      let index = packs.get(location.pack.sha256);
      if (index === undefined) {
        packs.set(location.pack.sha256, (index = packs.size));
        lines.push(JSON.stringify({ type: "pack", sha256: location.pack.sha256, size: location.pack.size }));
      }
      lines.push(wireLine(entry, { pack: index, offset: location.offset }));
    } else lines.push(wireLine(entry));
    if (lines.length >= CHUNK_LINES) {
      yield Buffer.from(`${lines.join("\n")}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) yield Buffer.from(`${lines.join("\n")}\n`);
}

/**
 * Reads /3 lines as they arrive and yields the entries, each held to the entry schema, strictly in
 * {@link pathKey} order (so no path twice), a packed file within its declared pack. Anything else is
 * `integrity_failed`. The caller checks the bytes' hash (see `openManifest`).
 */
export async function* decodeManifestLines(source: AsyncIterable<Uint8Array>): AsyncGenerator<ManifestEntry> {
  const header = (json: unknown) => `${JSON.stringify(json)}\n` === MANIFEST_V3_HEADER;
  yield* decodeManifestItems(source, { header, removals: false }) as AsyncGenerator<ManifestEntry>;
}

/**
 * {@link decodeManifestLines} for any line format: `header` accepts or refuses the first line, and
 * `removals` allows removed-path lines (a delta manifest's).
 */
export async function* decodeManifestItems(source: AsyncIterable<Uint8Array>, format: { readonly header: (json: unknown) => boolean; readonly removals: boolean }): AsyncGenerator<ManifestItem> {
  const refuse = (reason: string, path?: string) => new IntegrityError({ message: `checkpoint manifest is malformed: ${reason}`, context: path === undefined ? {} : { path: path.slice(0, 256) } });
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const packs: PackRef[] = [];
  let previous: Buffer | null = null;
  let header = false;
  for await (const line of splitRecords(source, { separator: 0x0a, maxBytes: MAX_LINE_BYTES, terminated: true, refuse })) {
    let json: unknown;
    try {
      json = JSON.parse(decoder.decode(line));
    } catch (error) {
      throw new IntegrityError({ message: "checkpoint manifest holds a line that is not JSON", cause: error });
    }
    if (!header) {
      if (!format.header(json)) throw refuse("not a manifest of the expected format");
      header = true;
      continue;
    }
    const type = typeof json === "object" && json !== null ? (json as { type?: unknown }).type : undefined;
    if (type === "pack") {
      const { sha256, size } = parseRecord(packLineSchema, json, { record: "checkpoint manifest pack", code: "integrity_failed" });
      packs.push({ sha256, size });
      continue;
    }
    if (type === "removed" && format.removals) {
      const removed = parseRecord(removedLineSchema, json, { record: "checkpoint manifest removal", code: "integrity_failed" });
      const key = pathKey(removed.path);
      if (previous && Buffer.compare(previous, key) >= 0) throw refuse("entries out of order or repeated", removed.path);
      previous = key;
      yield { type: "removed", path: removed.path };
      continue;
    }
    const entry = parseRecord(wireEntrySchema, json, { record: "checkpoint manifest entry", code: "integrity_failed" });
    const key = pathKey(entry.path);
    if (previous && Buffer.compare(previous, key) >= 0) throw refuse("entries out of order or repeated", entry.path);
    previous = key;
    if (entry.type !== "file" || (entry.pack === undefined && entry.offset === undefined)) {
      yield entry;
      continue;
    }
    const { pack: index, offset, ...plain } = entry;
    const pack = index === undefined ? undefined : packs[index];
    if (!pack || offset === undefined || offset + plain.size > pack.size) throw refuse("a file placed outside its pack", entry.path);
    yield { ...plain, location: { pack, offset } };
  }
  if (!header) throw refuse("empty");
}

/** One entry's line, its fields always in the same order (the manifest's bytes are its id). */
function wireLine(entry: ManifestEntry, packed?: { readonly pack: number; readonly offset: number }): string {
  const { type, path, mode, mtime } = entry;
  if (entry.type === "directory") return JSON.stringify({ type, path, mode, mtime });
  if (entry.type === "symlink") return JSON.stringify({ type, path, mode, mtime, target: entry.target });
  return JSON.stringify({ type, path, mode, mtime, size: entry.size, sha256: entry.sha256, ...packed });
}
