import { createHash } from "node:crypto";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { packKeyOf } from "./blob-keys.js";
import { createLimiter } from "./limiter.js";
import type { ManifestFile, PackRef } from "./manifest.js";
import { type StoredContents, createStoredContentsBuilder } from "./stored-contents.js";

/** Files up to this size are read whole and stored in shared packs; larger ones stream into a blob each. */
export const SMALL_BLOB_BYTES = 256 * 1024;
/** A pack is sealed and stored once it holds this many bytes. */
export const PACK_BYTES = 4 * 1024 * 1024;
/** Sealed packs being stored at once; each is held in memory until its put ends. */
const PARALLEL_PACK_PUTS = 2;

/** Collects small contents of one checkpoint into pack objects and reports where each content landed. */
export interface PackWriter {
  /**
   * Verifies `bytes` against the expected file and appends them to the open pack. Callers add each content
   * once (a checkpoint's missing contents are distinct); one added twice is only stored twice.
   */
  add(expected: ManifestFile, bytes: Buffer): Promise<void>;
  /**
   * Appends a content the caller hashed from these very bytes (not hashed again to check it) and answers where it lands:
   * the sequence number of the open pack (see `onSealed`) and its offset there. Seal it once {@link full}.
   */
  append(sha256: string, bytes: Buffer): { readonly pack: number; readonly offset: number };
  /**
   * Seals and stores the open pack whatever it holds (nothing when it is empty); at most a few puts run at
   * once, and this waits for a slot.
   */
  seal(): Promise<void>;
  /** Whether the open pack holds {@link PACK_BYTES} or more. */
  readonly full: boolean;
  /** Stores the last pack and waits for every put; returns each content's location by sha256, in a compact set. */
  finish(): Promise<StoredContents>;
}

/** Options of {@link createPackWriter}. */
export interface PackWriterOptions {
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly session: string;
  /** Told each pack as it is sealed, by the sequence number {@link PackWriter.append} answered, before its put. */
  readonly onSealed?: (sequence: number, pack: PackRef) => void;
  /** Whether {@link PackWriter.finish} builds the set of locations (a caller that tracks them itself skips it). @default true */
  readonly collect?: boolean;
}

/**
 * Packs turn one store call per small file into one per {@link PACK_BYTES}: contents are verified by hash as
 * they are added, the pack is named by the sha256 of its bytes (as every driver version names and reads them),
 * and nothing references it until a manifest does.
 */
export function createPackWriter(options: PackWriterOptions): PackWriter {
  // Compact: a first checkpoint of a tree of small files packs every one of them.
  const locations = createStoredContentsBuilder();
  const puts = createLimiter(PARALLEL_PACK_PUTS);
  // Contents are copied in as they are added, so the chunks they were sliced from are let go at once instead
  // of held (and aged into the old generation) until the pack is sealed. Pack buffers are reused once their
  // put ended (at most one open and PARALLEL_PACK_PUTS stored at once), so a checkpoint of any size
  // allocates three, not one per pack waiting for a collection to free it.
  const free: Buffer[] = [];
  const take = () => free.pop() ?? Buffer.allocUnsafeSlow(PACK_BYTES + SMALL_BLOB_BYTES);
  let buffer = take();
  let pending: Array<{ readonly sha256: string; readonly offset: number }> = [];
  let size = 0;
  let hash = createHash("sha256");
  let sequence = 0;
  const collect = options.collect ?? true;

  const seal = async () => {
    if (size === 0) return;
    const bytes = buffer.subarray(0, size);
    const pack = { sha256: hash.digest("hex"), size };
    if (collect) for (const { sha256, offset } of pending) locations.add(sha256, { pack, offset });
    options.onSealed?.(sequence, pack);
    sequence += 1;
    // The sealed bytes stay the put's until it ends; the next pack gets a buffer of its own.
    const sealed = buffer;
    buffer = take();
    pending = [];
    size = 0;
    hash = createHash("sha256");
    // An identical pack already stored (a retried checkpoint) is the same bytes under the same name.
    const key = packKeyOf(options.keyPrefix, options.session, pack.sha256);
    await puts.run(async () => {
      await options.store.put(key, bytes, {
        contentType: "application/octet-stream",
        ifNoneMatch: "*",
        contentLength: bytes.byteLength,
      });
      // A buffer grown past the usual size (contents above SMALL_BLOB_BYTES) is not kept.
      if (sealed.byteLength === PACK_BYTES + SMALL_BLOB_BYTES) free.push(sealed);
    });
  };

  const append = (sha256: string, bytes: Buffer) => {
    if (size + bytes.byteLength > buffer.byteLength) {
      // Only a caller adding contents above SMALL_BLOB_BYTES gets here: the pack grows to hold them.
      const grown = Buffer.allocUnsafeSlow(size + bytes.byteLength);
      buffer.copy(grown, 0, 0, size);
      buffer = grown;
    }
    const offset = size;
    if (collect) pending.push({ sha256, offset });
    buffer.set(bytes, size);
    size += bytes.byteLength;
    hash.update(bytes);
    return { pack: sequence, offset };
  };

  return {
    async add(expected, bytes) {
      if (bytes.byteLength !== expected.size || sha256HexSync(bytes) !== expected.sha256) {
        throw new SandboxFailedError({
          message: "a workspace file changed while it was checkpointed",
          context: { path: expected.path.slice(0, 256) },
        });
      }
      append(expected.sha256, bytes);
      if (size >= PACK_BYTES) await seal();
    },
    append,
    seal,
    get full() {
      return size >= PACK_BYTES;
    },
    async finish() {
      await seal();
      await puts.drain();
      return locations.build();
    },
  };
}
