import { createHash } from "node:crypto";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { packKeyOf } from "./blob-keys.js";
import { createLimiter } from "./limiter.js";
import type { ManifestFile } from "./manifest.js";
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
  /** Stores the last pack and waits for every put; returns each content's location by sha256, in a compact set. */
  finish(): Promise<StoredContents>;
}

/**
 * Packs turn one store call per small file into one per {@link PACK_BYTES}: contents are verified by hash as
 * they are added, the pack is named by the hash of its bytes, and nothing references it until a manifest does.
 */
export function createPackWriter(options: { readonly store: BlobStore; readonly keyPrefix: string; readonly session: string }): PackWriter {
  // Compact: a first checkpoint of a tree of small files packs every one of them.
  const locations = createStoredContentsBuilder();
  const puts = createLimiter(PARALLEL_PACK_PUTS);
  // Contents are copied in as they are added, so the chunks they were sliced from are let go at once instead
  // of held (and aged into the old generation) until the pack is sealed.
  let buffer = Buffer.allocUnsafeSlow(PACK_BYTES + SMALL_BLOB_BYTES);
  let pending: Array<{ readonly sha256: string; readonly offset: number }> = [];
  let size = 0;
  let hash = createHash("sha256");

  const seal = async () => {
    if (size === 0) return;
    const bytes = buffer.subarray(0, size);
    const pack = { sha256: hash.digest("hex"), size };
    for (const { sha256, offset } of pending) locations.add(sha256, { pack, offset });
    // The sealed bytes stay the put's until it ends; the next pack gets a buffer of its own.
    buffer = Buffer.allocUnsafeSlow(PACK_BYTES + SMALL_BLOB_BYTES);
    pending = [];
    size = 0;
    hash = createHash("sha256");
    // An identical pack already stored (a retried checkpoint) is the same bytes under the same name.
    const key = packKeyOf(options.keyPrefix, options.session, pack.sha256);
    await puts.run(async () => void (await options.store.put(key, bytes, { contentType: "application/octet-stream", ifNoneMatch: "*", contentLength: bytes.byteLength })));
  };

  return {
    async add(expected, bytes) {
      if (bytes.byteLength !== expected.size || sha256HexSync(bytes) !== expected.sha256) {
        throw new SandboxFailedError({ message: "a workspace file changed while it was checkpointed", context: { path: expected.path.slice(0, 256) } });
      }
      if (size + bytes.byteLength > buffer.byteLength) {
        // Only a caller adding contents above SMALL_BLOB_BYTES gets here: the pack grows to hold them.
        const grown = Buffer.allocUnsafeSlow(size + bytes.byteLength);
        buffer.copy(grown, 0, 0, size);
        buffer = grown;
      }
      pending.push({ sha256: expected.sha256, offset: size });
      bytes.copy(buffer, size);
      size += bytes.byteLength;
      hash.update(bytes);
      if (size >= PACK_BYTES) await seal();
    },
    async finish() {
      await seal();
      await puts.drain();
      return locations.build();
    },
  };
}
