import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import { type ManifestEntry, type PackLocation, type PackRef, wireEntrySchema } from "./manifest.js";
import { MANIFEST_V3_HEADER } from "./manifest-lines.js";
import { verifiedChunks } from "./manifest-store.js";
import { splitRecords } from "./split-records.js";

/** What a scan of a base manifest found. */
export interface BaseScan {
  /** Entries the base holds. */
  readonly count: number;
  /** Bytes of its regular files. */
  readonly bytes: number;
  /** The base's entries at the wanted paths (without pack locations), by path. */
  readonly found: ReadonlyMap<string, ManifestEntry>;
  /** The store objects the base places contents in: its packs and the sha256 of each content in a blob of its own. */
  readonly objects: { readonly packs: readonly string[]; readonly blobs: readonly string[] };
  /** Where the base places each of the wanted contents it holds: a pack location, or null for a blob of its own. */
  readonly contents: ReadonlyMap<string, PackLocation | null>;
}

const PATH_FIELD = Buffer.from('"path":"');
const SIZE_FIELD = Buffer.from('"size":');
const PACK_LINE = Buffer.from('{"type":"pack",');
const FILE_LINE = Buffer.from('{"type":"file",');
const SHA_FIELD = Buffer.from('"sha256":"');
const PACK_FIELD = Buffer.from('"pack":');
const OFFSET_FIELD = Buffer.from('"offset":');
const PACK_SIZE_FIELD = Buffer.from('"size":');
const MAX_LINE_BYTES = 16 * 1024;

/**
 * Reads a /3 manifest once for a delta: counts its entries and file bytes, notes the objects it places
 * contents in and where it places the `contents` asked for (so a delta stores none of them again), and
 * parses only the lines at `wanted` paths. Every other line is read for its path and size alone (no JSON or schema parse: the
 * manifest is one this driver wrote, its bytes hash-checked here as they stream and strictly parsed by any
 * restore), which is what keeps a small delta cheap over a large base. Anything not a /3 manifest, or a
 * mismatched hash, is `integrity_failed`.
 */
export async function scanBase(store: BlobStore, base: ManifestHandleMetadata, wanted: ReadonlySet<string>, contents: ReadonlySet<string> = new Set()): Promise<BaseScan> {
  const refuse = (reason: string) => new IntegrityError({ message: `checkpoint manifest is malformed: ${reason}`, context: { manifestKey: base.manifestKey } });
  const found = new Map<string, ManifestEntry>();
  let count = 0;
  let bytes = 0;
  let header = false;
  const packs: string[] = [];
  const packRefs: PackRef[] = [];
  const blobs: string[] = [];
  const located = new Map<string, PackLocation | null>();
  for await (const line of splitRecords(verifiedChunks(store, base), { separator: 0x0a, maxBytes: MAX_LINE_BYTES, terminated: true, refuse })) {
    if (!header) {
      if (`${line.toString("latin1")}\n` !== MANIFEST_V3_HEADER) throw refuse("not a /3 manifest");
      header = true;
      continue;
    }
    if (startsWith(line, PACK_LINE)) {
      const sha256 = shaOf(line, refuse);
      packs.push(sha256);
      packRefs.push({ sha256, size: numberAfter(line, PACK_SIZE_FIELD, refuse) });
      continue;
    }
    count += 1;
    const path = pathOf(line, refuse);
    if (!startsWith(line, FILE_LINE)) {
      if (wanted.has(path)) found.set(path, parseRecord(wireEntrySchema, JSON.parse(line.toString("utf8")), { record: "checkpoint manifest entry", code: "integrity_failed" }));
      continue;
    }
    const size = sizeOf(line, refuse);
    bytes += size;
    const packed = line.indexOf(PACK_FIELD) !== -1;
    if (size > 0 && !packed) blobs.push(shaOf(line, refuse));
    if (size > 0 && contents.size > 0) {
      const sha256 = shaOf(line, refuse);
      if (contents.has(sha256) && !located.has(sha256)) {
        const pack = packed ? packRefs[numberAfter(line, PACK_FIELD, refuse)] : undefined;
        if (packed && !pack) throw refuse("a file placed in a pack not declared before it");
        located.set(sha256, pack ? { pack, offset: numberAfter(line, OFFSET_FIELD, refuse) } : null);
      }
    }
    if (wanted.has(path)) {
      const entry = parseRecord(wireEntrySchema, JSON.parse(line.toString("utf8")), { record: "checkpoint manifest entry", code: "integrity_failed" });
      if (entry.type !== "file" || entry.size !== size) throw refuse("an entry that does not parse alike");
      const { pack: _pack, offset: _offset, ...plain } = entry;
      found.set(path, plain);
    }
  }
  if (!header) throw refuse("empty");
  return { count, bytes, found, objects: { packs, blobs }, contents: located };
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return line.byteLength >= prefix.byteLength && line.compare(prefix, 0, prefix.byteLength, 0, prefix.byteLength) === 0;
}

/** The path of an entry line: its `path` field is always second, right after `type`. */
function pathOf(line: Buffer, refuse: (reason: string) => Error): string {
  const field = line.indexOf(PATH_FIELD);
  if (field === -1) throw refuse("an entry without a path");
  const start = field + PATH_FIELD.byteLength;
  const end = line.indexOf(0x22, start);
  if (end === -1) throw refuse("an entry without a path");
  const escaped = line.indexOf(0x5c, start);
  if (escaped !== -1 && escaped < end) return (JSON.parse(line.toString("utf8")) as { path: string }).path;
  return line.toString("utf8", start, end);
}

function shaOf(line: Buffer, refuse: (reason: string) => Error): string {
  const field = line.indexOf(SHA_FIELD);
  const sha256 = field === -1 ? "" : line.toString("latin1", field + SHA_FIELD.byteLength, field + SHA_FIELD.byteLength + 64);
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw refuse("a content without a hash");
  return sha256;
}

function sizeOf(line: Buffer, refuse: (reason: string) => Error): number {
  return numberAfter(line, SIZE_FIELD, refuse);
}

/** The non-negative integer right after `field` in a line. */
function numberAfter(line: Buffer, fieldName: Buffer, refuse: (reason: string) => Error): number {
  const field = line.indexOf(fieldName);
  if (field === -1) throw refuse(`a line without ${fieldName.toString("latin1")}`);
  let size = 0;
  let digits = 0;
  for (let index = field + fieldName.byteLength; index < line.byteLength; index += 1) {
    const digit = (line[index] ?? 0) - 0x30;
    if (digit < 0 || digit > 9) break;
    size = size * 10 + digit;
    digits += 1;
  }
  if (digits === 0) throw refuse(`a line without ${fieldName.toString("latin1")}`);
  return size;
}
