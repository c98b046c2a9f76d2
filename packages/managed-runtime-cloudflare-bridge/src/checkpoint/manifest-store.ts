import { createHash } from "node:crypto";
import { type BlobStore, bodyChunks } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { type ManifestEntry, decodeManifest } from "./manifest.js";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import {
  MANIFEST_FORMAT_V4,
  MANIFEST_V4_PREFIX,
  decodeDeltaItems,
  overlay,
  parseDeltaHeader,
} from "./manifest-delta.js";
import {
  MANIFEST_FORMAT_V3,
  MANIFEST_V3_HEADER,
  type ManifestItem,
  decodeManifestLines,
} from "./manifest-lines.js";

/** Earlier manifests (one JSON document) are read whole; none larger than this is accepted. */
const MAX_LEGACY_MANIFEST_BYTES = 256 * 1024 * 1024;

/** A stored manifest whose size and hash matched its handle. */
export interface StoredManifest {
  /** Its format tag. */
  readonly format: string;
  /**
   * Its entries in manifest order, read again from the store on every call; a /3 manifest streams, its
   * bytes hashed once more on the way and a mismatch at the end is `integrity_failed`.
   */
  entries(): AsyncIterable<ManifestEntry>;
  /** The base manifest a delta (/4) manifest lies over; absent for every other format. */
  readonly base?: ManifestHandleMetadata;
}

/** Longest first line a manifest may have before it is refused. */
const MAX_HEADER_BYTES = 1024;

/**
 * Opens a manifest named by a validated handle: one streamed pass checks its size and hash before any
 * entry is read; a /3 manifest is then read line by line on each pass (never whole), a /4 delta laid over
 * its base (opened the same way, and required to be /3) as both stream, an earlier one parsed whole.
 */
export async function openManifest(
  store: BlobStore,
  metadata: ManifestHandleMetadata,
): Promise<StoredManifest> {
  // A first pass checks size and hash before any entry is parsed, and tells the format by the first line.
  let head = Buffer.alloc(0);
  for await (const chunk of verifiedChunks(store, metadata)) {
    if (head.byteLength < MAX_HEADER_BYTES && !head.includes(0x0a))
      head = Buffer.concat([head, chunk.subarray(0, MAX_HEADER_BYTES)]);
  }
  const text = head.toString("latin1");
  if (text.startsWith(MANIFEST_V3_HEADER)) {
    return {
      format: MANIFEST_FORMAT_V3,
      entries: () => decodeManifestLines(verifiedChunks(store, metadata)),
    };
  }
  if (text.startsWith(MANIFEST_V4_PREFIX)) {
    const base = baseOf(metadata, firstLine(head));
    const under = await openManifest(store, base);
    if (under.format !== MANIFEST_FORMAT_V3)
      throw new IntegrityError({
        message: "a delta checkpoint manifest lies over a base that is not a full manifest",
        context: { manifestKey: metadata.manifestKey },
      });
    return {
      format: MANIFEST_FORMAT_V4,
      base,
      entries: () => overlay(under.entries(), decodeDeltaItems(verifiedChunks(store, metadata))),
    };
  }
  if (metadata.size > MAX_LEGACY_MANIFEST_BYTES)
    throw new IntegrityError({
      message: "checkpoint manifest is too large",
      context: { manifestKey: metadata.manifestKey },
    });
  // An earlier format: one JSON document, read whole.
  const bytes: Uint8Array[] = [];
  for await (const chunk of verifiedChunks(store, metadata)) bytes.push(Buffer.from(chunk));
  const manifest = decodeManifest(Buffer.concat(bytes));
  return {
    format: manifest.format,
    async *entries() {
      yield* manifest.entries;
    },
  };
}

/**
 * The entries of a /3 or /4 manifest in one streamed pass, without a pass beforehand: its size and hash
 * are checked as it streams and a mismatch is `integrity_failed` at the end, so a caller must discard
 * whatever it made of the entries when the pass throws. A delta (small by construction) is read and
 * checked whole first, then laid over its base as that streams. With `legacy`, an earlier one-document
 * manifest is read whole, hash-checked, then given; without, any other format is `integrity_failed`.
 */
export async function* streamManifestOnce(
  store: BlobStore,
  metadata: ManifestHandleMetadata,
  options: { readonly legacy?: boolean } = {},
): AsyncGenerator<ManifestEntry> {
  const chunks = verifiedChunks(store, metadata);
  const head = await headOf(chunks);
  if (options.legacy && !head.toString("latin1").startsWith(MANIFEST_V3_HEADER) && !isDelta(head)) {
    // An earlier format: one JSON document, read whole (and hash-checked) before any entry is given.
    if (metadata.size > MAX_LEGACY_MANIFEST_BYTES)
      throw new IntegrityError({
        message: "checkpoint manifest is too large",
        context: { manifestKey: metadata.manifestKey },
      });
    yield* decodeManifest(await rest(head, chunks)).entries;
    return;
  }
  if (!isDelta(head)) {
    yield* decodeManifestLines(prepend(head, chunks));
    return;
  }
  const delta = await rest(head, chunks);
  yield* overlay(
    decodeManifestLines(verifiedChunks(store, baseOf(metadata, firstLine(delta)))),
    decodeDeltaItems(once(delta)),
  );
}

/**
 * What the next delta builds on: the base of the manifest `metadata` names and the items of its delta,
 * read and hash-checked whole, when `delta` (the latest-manifest hint) says it is one; else the manifest
 * itself, whose hash the caller's own read of it checks. Null when the hint was wrong.
 */
export async function deltaPartsOf(
  store: BlobStore,
  metadata: ManifestHandleMetadata,
  delta: boolean,
): Promise<{ readonly base: ManifestHandleMetadata; readonly prior: PriorLines } | null> {
  if (!delta) return { base: metadata, prior: NO_PRIOR_LINES };
  const chunks = verifiedChunks(store, metadata);
  const head = await headOf(chunks);
  if (!isDelta(head)) {
    // Read to the end rather than cancelled: a hint that was wrong costs one read, held nowhere.
    for await (const _ of chunks);
    return null;
  }
  // Kept as its hash-checked bytes, decoded on every read: as objects, its lines would outlive every young
  // collection of the next delta's scan.
  const bytes = await rest(head, chunks);
  const items = () => decodeDeltaItems(once(bytes));
  let count = 0;
  for await (const _ of items()) count += 1;
  return { base: baseOf(metadata, firstLine(bytes)), prior: { count, items } };
}

/** A delta manifest's lines, as the next delta over the same base reads them. */
export interface PriorLines {
  readonly count: number;
  /** Its items in order, decoded afresh on every call. */
  items(): AsyncIterable<ManifestItem>;
}

const NO_PRIOR_LINES: PriorLines = {
  count: 0,
  async *items() {
    yield* [];
  },
};

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** At least the first line's worth of bytes (or all there are, when fewer). */
async function headOf(chunks: AsyncGenerator<Uint8Array>): Promise<Buffer> {
  let head = Buffer.alloc(0);
  while (
    head.byteLength < MANIFEST_V3_HEADER.length + MANIFEST_V4_PREFIX.length &&
    !head.includes(0x0a)
  ) {
    const next = await chunks.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value]);
  }
  return head;
}

function isDelta(head: Buffer): boolean {
  return head.toString("latin1", 0, MANIFEST_V4_PREFIX.length) === MANIFEST_V4_PREFIX;
}

/** The whole manifest: a delta is small by construction. */
async function rest(head: Buffer, chunks: AsyncGenerator<Uint8Array>): Promise<Buffer> {
  const bytes: Buffer[] = [head];
  for await (const chunk of chunks) bytes.push(Buffer.from(chunk));
  return Buffer.concat(bytes);
}

/** The metadata of the base a delta manifest's first line names: same session, its key derived alike. */
function baseOf(metadata: ManifestHandleMetadata, line: string): ManifestHandleMetadata {
  const base = parseDeltaHeader(line);
  const manifestKey = metadata.manifestKey.replace(/[0-9a-f]{64}\.json$/, `${base.sha256}.json`);
  if (manifestKey === metadata.manifestKey)
    throw new IntegrityError({
      message: "a delta checkpoint manifest names itself as its base",
      context: { manifestKey },
    });
  return { ...metadata, contentHash: `sha256:${base.sha256}`, size: base.size, manifestKey };
}

function firstLine(head: Buffer): string {
  const end = head.indexOf(0x0a);
  if (end === -1 || end > MAX_HEADER_BYTES)
    throw new IntegrityError({ message: "checkpoint manifest header is malformed" });
  return head.toString("utf8", 0, end);
}

async function* prepend(
  head: Uint8Array,
  rest: AsyncGenerator<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  try {
    if (head.byteLength > 0) yield head;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  } finally {
    await rest.return(undefined);
  }
}

/**
 * The manifest's bytes as they are read; past the last chunk, its size and hash must match the handle. Each
 * chunk may be a view of a buffer the next read reuses (see `bodyChunks`): copy what you keep.
 */
export async function* verifiedChunks(
  store: BlobStore,
  metadata: ManifestHandleMetadata,
): AsyncGenerator<Uint8Array> {
  const object = await store.get(metadata.manifestKey);
  if (!object)
    throw new NotFoundError({
      message: "checkpoint manifest is missing from the store",
      context: { manifestKey: metadata.manifestKey },
    });
  if (object.size !== metadata.size) {
    await object
      .stream()
      .cancel()
      .catch(() => undefined);
    throw new IntegrityError({
      message: "checkpoint manifest size does not match its handle",
      context: { manifestKey: metadata.manifestKey },
    });
  }
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of bodyChunks(object.stream())) {
    hash.update(chunk);
    size += chunk.byteLength;
    yield chunk;
  }
  if (size !== metadata.size || `sha256:${hash.digest("hex")}` !== metadata.contentHash) {
    throw new IntegrityError({
      message: "checkpoint manifest hash does not match its handle",
      context: { manifestKey: metadata.manifestKey },
    });
  }
}
