import type { BlobStore } from "@open-managed-agents/blob-store";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import { blobKeyOf } from "./blob-keys.js";
import { createLimiter } from "./limiter.js";
import type { ManifestEntry, ManifestFile } from "./manifest.js";
import type { ManifestSink } from "./manifest-sink.js";
import { SMALL_BLOB_BYTES, createPackWriter } from "./pack-writer.js";
import { createRecentContents } from "./recent-contents.js";
import { createBufferedSpool } from "./buffered-spool.js";
import type { StoredContents } from "./stored-contents.js";

/** Large contents being stored at once, each from a spool of its own. */
const PARALLEL_BLOB_PUTS = 2;
const EMPTY_SHA256 = sha256HexSync("");
/** Encoded manifest lines allowed to wait for the open pack before it is sealed short of PACK_BYTES. */
export const MAX_WAITING_LINE_BYTES = 4 * 1024 * 1024;

/**
 * A file entry being filled in: its content's hash and location are set on it as they become known (one
 * object per entry, not one per step).
 */
export type PendingFile = { -readonly [K in keyof ManifestFile]: ManifestFile[K] };
type UnplacedFile = Omit<PendingFile, "sha256"> & { sha256?: string };

/** Options of {@link createContentStore}. */
export interface ContentStoreOptions {
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly session: string;
  /** Contents the session is known to have stored: referenced, not stored again. */
  readonly stored: StoredContents;
  readonly spool: { readonly maxBytes: number; readonly directory?: string };
  /** Receives every entry in the order it was given, each file with its content's location or pack. */
  readonly sink: Pick<ManifestSink, "add" | "addPacked" | "sealed" | "waitingBytes">;
}

/**
 * Stores the contents of entries given in manifest order as their bytes arrive and hands each entry to the
 * manifest sink in that same order: small contents go into packs (the sink holds an entry's line, and every
 * line after it, until its pack is sealed), large ones through a spool into a blob of their own. A content
 * stored before (known to the session, or met again lately in this checkpoint) is referenced, not stored twice.
 */
export function createContentStore(options: ContentStoreOptions) {
  const { store, sink } = options;
  const recent = createRecentContents();
  const blobs = createLimiter(PARALLEL_BLOB_PUTS);
  const packs = createPackWriter({
    store,
    keyPrefix: options.keyPrefix,
    session: options.session,
    collect: false,
    onSealed: (sequence, pack) => sink.sealed(sequence, pack),
  });

  /** Places a file whose content the session or this checkpoint already stored; false when it must be stored. */
  const known = (file: PendingFile): boolean => {
    const location = options.stored.get(file.sha256);
    if (location !== undefined) {
      if (location) file.location = location;
      sink.add(file);
      return true;
    }
    const seen = recent.get(file.sha256);
    if (seen === undefined) return false;
    if (seen === null) sink.add(file);
    else sink.addPacked(file, seen.pack, seen.offset);
    return true;
  };

  /**
   * Seals the open pack when it is full, or early when the lines waiting for it reached their bound (a pack
   * of very many tiny contents, or one small file followed by a great many entries); a promise only then.
   */
  const bounded = (): Promise<void> | undefined => {
    if (sink.waitingBytes >= MAX_WAITING_LINE_BYTES) return packs.seal();
    return packs.full ? packs.seal() : undefined;
  };

  return {
    /** Contents up to this size are handed whole to {@link addSmall}; larger ones stream to {@link addLarge}. */
    smallBytes: SMALL_BLOB_BYTES,
    /** A folder or a symlink: handed on in its turn. Await what it returns (a promise only when a pack is sealed). */
    place(entry: ManifestEntry): Promise<void> | undefined {
      sink.add(entry);
      return bounded();
    },
    /** A small file's content (a view: it is copied into the open pack). */
    async addSmall(entry: UnplacedFile, bytes: Buffer): Promise<void> {
      const file = entry as PendingFile;
      file.sha256 = bytes.byteLength === 0 ? EMPTY_SHA256 : sha256HexSync(bytes);
      if (bytes.byteLength === 0) sink.add(file);
      else if (!known(file)) {
        const at = packs.append(file.sha256, bytes);
        recent.add(file.sha256, at);
        sink.addPacked(file, at.pack, at.offset);
      }
      await bounded();
    },
    /**
     * A large file's content as it arrives (views of a buffer the source reuses: each is copied into the spool
     * before the next is read), spooled while hashed, then stored under its hash.
     */
    async addLarge(entry: UnplacedFile, chunks: AsyncIterable<Buffer>): Promise<void> {
      const file = entry as PendingFile;
      const spool = await createBufferedSpool({ ...options.spool, hash: true });
      try {
        for await (const chunk of chunks) await spool.write(chunk);
        const size = await spool.finish();
        if (size !== file.size)
          throw new Error(`a content of ${size} bytes where ${file.size} were listed`);
        file.sha256 = spool.sha256();
        if (known(file)) {
          await spool.dispose();
          return await bounded();
        }
        recent.add(file.sha256, null);
        sink.add(file);
        await bounded();
        const key = blobKeyOf(options.keyPrefix, options.session, file.sha256);
        await blobs.run(async () => {
          try {
            await store.put(key, spool.read(), {
              contentLength: size,
              contentType: "application/octet-stream",
              ifNoneMatch: "*",
            });
          } finally {
            await spool.dispose();
          }
        });
      } catch (error) {
        await spool.dispose();
        throw error;
      }
    },
    /** Stores the last pack and waits for every put; every pack has been reported sealed when it resolves. */
    async finish(): Promise<void> {
      await packs.finish();
      await blobs.drain();
    },
  };
}
