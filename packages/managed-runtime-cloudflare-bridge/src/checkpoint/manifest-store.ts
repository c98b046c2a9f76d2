import { createHash } from "node:crypto";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { type ManifestEntry, decodeManifest } from "./manifest.js";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import { MANIFEST_FORMAT_V3, MANIFEST_V3_HEADER, decodeManifestLines } from "./manifest-lines.js";

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
}

/**
 * Opens a manifest named by a validated handle: one streamed pass checks its size and hash before any
 * entry is read; a /3 manifest is then read line by line on each pass (never whole), an earlier one parsed whole.
 */
export async function openManifest(store: BlobStore, metadata: ManifestHandleMetadata): Promise<StoredManifest> {
  // A first pass checks size and hash before any entry is parsed, and tells the format by the head.
  let head = "";
  for await (const chunk of verifiedChunks(store, metadata)) {
    if (head.length < MANIFEST_V3_HEADER.length) head += Buffer.from(chunk.subarray(0, MANIFEST_V3_HEADER.length)).toString("latin1");
  }
  if (head.startsWith(MANIFEST_V3_HEADER)) {
    return { format: MANIFEST_FORMAT_V3, entries: () => decodeManifestLines(verifiedChunks(store, metadata)) };
  }
  if (metadata.size > MAX_LEGACY_MANIFEST_BYTES) throw new IntegrityError({ message: "checkpoint manifest is too large", context: { manifestKey: metadata.manifestKey } });
  // An earlier format: one JSON document, read whole.
  const bytes: Uint8Array[] = [];
  for await (const chunk of verifiedChunks(store, metadata)) bytes.push(chunk);
  const manifest = decodeManifest(Buffer.concat(bytes));
  return {
    format: manifest.format,
    async *entries() {
      yield* manifest.entries;
    },
  };
}

/**
 * The entries of a /3 manifest in one streamed pass, without a pass beforehand: its size and hash are
 * checked as it streams and a mismatch is `integrity_failed` at the end, so a caller must discard whatever
 * it made of the entries when the pass throws. Any other format is refused (`integrity_failed`).
 */
export function streamManifestOnce(store: BlobStore, metadata: ManifestHandleMetadata): AsyncIterable<ManifestEntry> {
  return decodeManifestLines(verifiedChunks(store, metadata));
}

/** The manifest's bytes as they are read; past the last chunk, its size and hash must match the handle. */
async function* verifiedChunks(store: BlobStore, metadata: ManifestHandleMetadata): AsyncGenerator<Uint8Array> {
  const object = await store.get(metadata.manifestKey);
  if (!object) throw new NotFoundError({ message: "checkpoint manifest is missing from the store", context: { manifestKey: metadata.manifestKey } });
  if (object.size !== metadata.size) {
    await object.stream().cancel().catch(() => undefined);
    throw new IntegrityError({ message: "checkpoint manifest size does not match its handle", context: { manifestKey: metadata.manifestKey } });
  }
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of object.stream() as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
    yield chunk;
  }
  if (size !== metadata.size || `sha256:${hash.digest("hex")}` !== metadata.contentHash) {
    throw new IntegrityError({ message: "checkpoint manifest hash does not match its handle", context: { manifestKey: metadata.manifestKey } });
  }
}
