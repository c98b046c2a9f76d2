import type { BlobStore } from "@open-managed-agents/blob-store";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import { Readable } from "node:stream";
import { blobKeyOf } from "./blob-keys.js";
import { createLimiter } from "./limiter.js";
import type { ManifestEntry, ManifestFile, PackRef } from "./manifest.js";
import { SMALL_BLOB_BYTES, createPackWriter } from "./pack-writer.js";
import { createRecentContents } from "./recent-contents.js";
import { createBufferedSpool } from "./buffered-spool.js";
import type { StoredContents } from "./stored-contents.js";

/** Large contents being stored at once, each from a spool of its own. */
const PARALLEL_BLOB_PUTS = 2;
const EMPTY_SHA256 = sha256HexSync("");

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
  /** Receives every entry in the order it was given, each file with its content's location. */
  readonly write: (entry: ManifestEntry) => void;
}

/**
 * Stores the contents of entries given in manifest order as their bytes arrive and hands each entry on, in
 * that same order, once its location is known: small contents go into packs (an entry waits until its pack
 * is sealed, and every entry after it waits with it), large ones through a spool into a blob of their own.
 * A content stored before (known to the session, or met again lately in this checkpoint) is referenced, not
 * stored twice.
 */
export function createContentStore(options: ContentStoreOptions) {
  const { store } = options;
  /** Entries waiting for their pack (by sequence number; -1 for an entry complete already), and every entry behind them. */
  const queue: Array<{ readonly entry: ManifestEntry | PendingFile; readonly pack: number; readonly offset: number }> = [];
  // Every pack sealed so far, by sequence number: one per few MiB of small contents.
  const sealed = new Map<number, PackRef>();
  const recent = createRecentContents();
  const blobs = createLimiter(PARALLEL_BLOB_PUTS);

  let first = 0;
  const release = () => {
    for (; first < queue.length; first += 1) {
      const head = queue[first] as (typeof queue)[number];
      if (head.pack < 0) options.write(head.entry as ManifestEntry);
      else {
        const pack = sealed.get(head.pack);
        if (!pack) break;
        const file = head.entry as PendingFile;
        file.location = { pack, offset: head.offset };
        options.write(file);
      }
    }
    // Written entries leave the array in one step, not one shift each.
    if (first === queue.length) {
      queue.length = 0;
      first = 0;
    } else if (first > 4096) {
      queue.splice(0, first);
      first = 0;
    }
  };

  const packs = createPackWriter({
    store,
    keyPrefix: options.keyPrefix,
    session: options.session,
    collect: false,
    onSealed(sequence, pack) {
      sealed.set(sequence, pack);
      release();
    },
  });

  /** Hands an entry on now, or behind the ones still waiting. */
  const place = (entry: ManifestEntry) => {
    if (first === queue.length) options.write(entry);
    else queue.push({ entry, pack: -1, offset: 0 });
  };

  /** Places a file whose content the session or this checkpoint already stored; false when it must be stored. */
  const known = (file: PendingFile): boolean => {
    const location = options.stored.get(file.sha256);
    if (location !== undefined) {
      if (location) file.location = location;
      place(file);
      return true;
    }
    const seen = recent.get(file.sha256);
    if (seen === undefined) return false;
    const pack = seen === null ? undefined : sealed.get(seen.pack);
    if (seen === null) place(file);
    else if (pack) {
      file.location = { pack, offset: seen.offset };
      place(file);
    } else queue.push({ entry: file, pack: seen.pack, offset: seen.offset });
    return true;
  };

  return {
    /** Contents up to this size are handed whole to {@link addSmall}; larger ones stream to {@link addLarge}. */
    smallBytes: SMALL_BLOB_BYTES,
    /** A folder or a symlink: handed on in its turn. */
    place,
    /** A small file's content (a view: it is copied into the open pack). */
    async addSmall(entry: UnplacedFile, bytes: Buffer): Promise<void> {
      const file = entry as PendingFile;
      file.sha256 = bytes.byteLength === 0 ? EMPTY_SHA256 : sha256HexSync(bytes);
      if (bytes.byteLength === 0) return place(file);
      if (known(file)) return;
      const at = packs.append(file.sha256, bytes);
      recent.add(file.sha256, at);
      queue.push({ entry: file, pack: at.pack, offset: at.offset });
      await packs.sealIfFull();
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
        if (size !== file.size) throw new Error(`a content of ${size} bytes where ${file.size} were listed`);
        file.sha256 = spool.sha256();
        if (known(file)) {
          await spool.dispose();
          return;
        }
        recent.add(file.sha256, null);
        place(file);
        const key = blobKeyOf(options.keyPrefix, options.session, file.sha256);
        await blobs.run(async () => {
          try {
            await store.put(key, Readable.toWeb(spool.read() as Readable) as ReadableStream<Uint8Array>, { contentLength: size, contentType: "application/octet-stream", ifNoneMatch: "*" });
          } finally {
            await spool.dispose();
          }
        });
      } catch (error) {
        await spool.dispose();
        throw error;
      }
    },
    /** Stores the last pack and waits for every put; every entry has been handed on when it resolves. */
    async finish(): Promise<void> {
      await packs.finish();
      await blobs.drain();
      release();
      if (first < queue.length) throw new Error("entries were left waiting for a pack that was never sealed");
    },
  };
}
