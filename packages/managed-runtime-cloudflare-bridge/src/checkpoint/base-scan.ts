import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import {
  type ManifestEntry,
  type PackLocation,
  type PackRef,
  wireEntrySchema,
} from "./manifest.js";
import { MANIFEST_V3_HEADER, MAX_LINE_BYTES } from "./manifest-lines.js";
import { verifiedChunks } from "./manifest-store.js";
import { type LineFields, parseLine, readLineFields } from "./line-fields.js";
import { compareKeys, forEachRecord } from "./split-records.js";

/** What a scan of a base manifest found. */
export interface BaseScan {
  /** Entries the base holds. */
  readonly count: number;
  /** Bytes of its regular files. */
  readonly bytes: number;
  /** The store objects the base places contents in: its packs and the sha256 of each content in a blob of its own. */
  readonly objects: { readonly packs: readonly string[]; readonly blobs: readonly string[] };
  /** Where the base places each of the wanted contents it holds: a pack location, or null for a blob of its own. */
  readonly contents: ReadonlyMap<string, PackLocation | null>;
}

/**
 * The paths a scan stops at, met in manifest order as the base streams: each is handed the base's entry
 * there, or null where the base holds none, so a caller can merge its own sorted paths with the base
 * without holding either.
 */
export interface BaseVisitor {
  /** The next path wanted, as UTF-8 bytes; null when none is left. */
  next(): Buffer | null;
  /** Takes the base's entry at {@link next}'s path (without its pack location), or null where it has none, and moves on. */
  take(entry: ManifestEntry | null): Promise<void>;
}

export const NO_VISITOR: BaseVisitor = { next: () => null, take: async () => undefined };

const HEADER = Buffer.from(MANIFEST_V3_HEADER.slice(0, -1), "latin1");

/**
 * Reads a /3 manifest once for a delta: counts its entries and file bytes, notes the objects it places
 * contents in and where it places the `contents` asked for (so a delta stores none of them again), and
 * parses only the lines at the paths `visitor` asks for, handing each over as the scan passes it. Every
 * other line is read where it lies in its chunk, for its path, size and the head of its hash alone (see
 * {@link readLineFields}): no string, JSON or schema parse (the manifest is one this driver wrote, its bytes
 * hash-checked here as they stream and strictly parsed by any restore), which is what keeps a small delta
 * cheap over a large base. The visitor's paths are met by a merge, so the lines' paths must strictly
 * increase. Anything not a /3 manifest, or a mismatched hash, is `integrity_failed`; whatever the visitor
 * throws ends the scan.
 */
export async function scanBase(
  store: BlobStore,
  base: ManifestHandleMetadata,
  contents: ReadonlySet<string> = new Set(),
  visitor: BaseVisitor = NO_VISITOR,
): Promise<BaseScan> {
  return scanLines(verifiedChunks(store, base), refusalOf(base), contents, visitor);
}

/** The error a malformed line of `base` is refused with. */
export function refusalOf(base: ManifestHandleMetadata): (reason: string) => Error {
  return (reason) =>
    new IntegrityError({
      message: `checkpoint manifest is malformed: ${reason}`,
      context: { manifestKey: base.manifestKey },
    });
}

/**
 * {@link scanBase} over the bytes of a /3 manifest, however they are read. `onLine` sees each line after
 * the header (a pack declaration or an entry) with the fields the scan read from it, before the visitor.
 */
export async function scanLines(
  source: AsyncIterable<Uint8Array>,
  refuse: (reason: string) => Error,
  contents: ReadonlySet<string> = new Set(),
  visitor: BaseVisitor = NO_VISITOR,
  onLine?: (chunk: Buffer, start: number, end: number, line: LineFields) => void,
): Promise<BaseScan> {
  let count = 0;
  let bytes = 0;
  let header = false;
  const packs: string[] = [];
  const packRefs: PackRef[] = [];
  const blobs: string[] = [];
  const located = new Map<string, PackLocation | null>();
  // The contents are met by the first 32 bits of their hash first.
  const heads = new Set<number>();
  for (const sha256 of contents) heads.add(hashHead(Buffer.from(sha256, "latin1"), 0, refuse));
  // The previous entry's path, for the order check: copied, since the chunk it lay in may be the buffer the
  // next read refills (see `verifiedChunks`).
  let previous = Buffer.allocUnsafe(256);
  let previousEnd = -1;

  const visit = (chunk: Buffer, start: number, end: number) => {
    if (!header) {
      if (end - start !== HEADER.byteLength || HEADER.compare(chunk, start, end) !== 0)
        throw refuse("not a /3 manifest");
      header = true;
      return;
    }
    const line = readLineFields(chunk, start, end, refuse);
    onLine?.(chunk, start, end, line);
    if (line.kind === "pack") {
      const sha256 = hashAt(chunk, line.shaAt, refuse);
      packs.push(sha256);
      packRefs.push({ sha256, size: line.size });
      return;
    }
    count += 1;
    const { pathBytes, pathStart, pathEnd } = line;
    if (
      previousEnd !== -1 &&
      compareKeys(previous, 0, previousEnd, pathBytes, pathStart, pathEnd) >= 0
    )
      throw refuse("entries out of order");
    if (pathEnd - pathStart > previous.byteLength)
      previous = Buffer.allocUnsafe(2 * (pathEnd - pathStart));
    previousEnd = pathBytes.copy(previous, 0, pathStart, pathEnd);
    const fileSize = line.kind === "file" ? line.size : -1;
    if (fileSize > 0) {
      bytes += fileSize;
      if (line.pack === -1) blobs.push(hashAt(chunk, line.shaAt, refuse));
      else if (heads.has(hashHead(chunk, line.shaAt, refuse))) {
        const sha256 = hashAt(chunk, line.shaAt, refuse);
        if (contents.has(sha256) && !located.has(sha256)) {
          const pack = packRefs[line.pack];
          if (!pack) throw refuse("a file placed in a pack not declared before it");
          located.set(sha256, { pack, offset: line.offset });
        }
      }
    }
    const next = visitor.next();
    // The visitor's paths up to this one: the only lines that take an await.
    if (next !== null && compareKeys(next, 0, next.length, previous, 0, previousEnd) <= 0)
      return meet(chunk, start, end, fileSize);
  };

  /**
   * Hands the visitor each of its paths before this line's (the base has none of them), then this line's
   * entry if it asks for it. The line's path is the one `previous` holds, and its chunk stays as it is: the
   * scan reads on only once this is done.
   */
  const meet = async (chunk: Buffer, start: number, end: number, fileSize: number) => {
    for (let next = visitor.next(); next !== null; next = visitor.next()) {
      const order = compareKeys(next, 0, next.length, previous, 0, previousEnd);
      if (order > 0) return;
      if (order < 0) {
        await visitor.take(null);
        continue;
      }
      const entry = parseEntry(chunk, start, end, refuse);
      if (fileSize !== -1 && (entry.type !== "file" || entry.size !== fileSize))
        throw refuse("an entry that does not parse alike");
      return visitor.take(plainEntry(entry));
    }
  };
  await forEachRecord(
    source,
    { separator: 0x0a, maxBytes: MAX_LINE_BYTES, terminated: true, refuse },
    visit,
  );
  if (!header) throw refuse("empty");
  // The visitor's paths after the base's last.
  while (visitor.next() !== null) await visitor.take(null);
  // A content the base holds in a blob of its own is located as such.
  if (contents.size > 0)
    for (const sha256 of blobs)
      if (contents.has(sha256) && !located.has(sha256)) located.set(sha256, null);
  return { count, bytes, objects: { packs, blobs }, contents: located };
}

export function parseEntry(
  chunk: Buffer,
  start: number,
  end: number,
  refuse: (reason: string) => Error,
) {
  return parseRecord(wireEntrySchema, parseLine(chunk, start, end, refuse), {
    record: "checkpoint manifest entry",
    code: "integrity_failed",
  });
}

/** An entry without its pack location: a delta places its fresh lines anew. */
export function plainEntry(entry: ReturnType<typeof parseEntry>): ManifestEntry {
  if (entry.type !== "file") return entry;
  return {
    type: "file",
    path: entry.path,
    mode: entry.mode,
    mtime: entry.mtime,
    size: entry.size,
    sha256: entry.sha256,
  };
}

const HEX = new Int8Array(256).fill(-1);
for (let digit = 0; digit < 16; digit += 1) HEX["0123456789abcdef".charCodeAt(digit)] = digit;

/** The first 32 bits of a hex hash at `at`, read in place. */
export function hashHead(bytes: Buffer, at: number, refuse: (reason: string) => Error): number {
  let head = 0;
  for (let index = at; index < at + 8; index += 1) {
    const digit = HEX[bytes[index] ?? 0] as number;
    if (digit < 0) throw refuse("a content without a hash");
    head = head * 16 + digit;
  }
  return head;
}

export function hashAt(bytes: Buffer, at: number, refuse: (reason: string) => Error): string {
  const sha256 = at < 0 ? "" : bytes.toString("latin1", at, at + 64);
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw refuse("a content without a hash");
  return sha256;
}
