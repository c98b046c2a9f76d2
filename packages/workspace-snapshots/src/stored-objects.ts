import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import type { ObjectKind, SessionKeys } from "./keys.js";
import {
  type SnapshotObject,
  type TreeEntry,
  type TreeObject,
  checkEntryOrder,
  decodeObject,
  encodeObject,
  parseTree,
  snapshotSchema,
} from "./objects.js";

/** Largest tree or snapshot object read: a tree chunk holds at most {@link TREE_CHUNK_ENTRIES} entries. */
export const MAX_OBJECT_BYTES = 16 * 1024 * 1024;
/** Entries of one tree object; a larger folder's tree is a list of chunks of this many. */
export const TREE_CHUNK_ENTRIES = 2000;
/** Writes in flight at once. */
const WRITES_IN_FLIGHT = 8;

/** The whole body of `key`, which must exist and be at most `maxBytes`. */
export async function readWhole(
  store: BlobStore,
  key: string,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const object = await store.get(key);
  if (!object)
    throw new NotFoundError({
      message: `snapshot ${what} is missing from the store`,
      context: { key },
    });
  if (object.size > maxBytes) {
    await object
      .stream()
      .cancel()
      .catch(() => undefined);
    throw new IntegrityError({
      message: `snapshot ${what} is larger than any this format writes`,
      context: { key },
    });
  }
  return object.bytes();
}

/** Writes that run a few at a time; `drain` waits for all and throws the first failure. */
export interface WriteQueue {
  push(write: () => Promise<unknown>): Promise<void>;
  drain(): Promise<void>;
}

export function createWriteQueue(limit = WRITES_IN_FLIGHT): WriteQueue {
  const running = new Set<Promise<void>>();
  let failure: unknown = null;
  return {
    async push(write) {
      if (failure !== null) throw failure;
      while (running.size >= limit) await Promise.race(running);
      if (failure !== null) throw failure;
      const task: Promise<void> = write().then(
        () => void running.delete(task),
        (error: unknown) => {
          running.delete(task);
          failure ??= error;
        },
      );
      running.add(task);
    },
    async drain() {
      await Promise.all(running);
      if (failure !== null) throw failure;
    },
  };
}

/** Stores an object once by its hash: an existing object at the key is the same bytes, or fails on read. */
export async function putOnce(
  store: BlobStore,
  key: string,
  bytes: Uint8Array,
  contentType: string,
): Promise<void> {
  await store.put(key, bytes, { contentType, ifNoneMatch: "*", contentLength: bytes.length });
}

/** The session's trees and snapshots, each checked against its hash when read. */
export interface TreeStore {
  /** Every entry of a tree, in order, chunk by chunk. */
  entries(hash: string): AsyncGenerator<TreeEntry>;
  /** The entries of a tree's chunks, one chunk at a time, in order. */
  chunks(hash: string): AsyncGenerator<readonly TreeEntry[]>;
  /** Writes a tree object (or chunk) and returns its hash; the write itself may still be queued. */
  write(tree: TreeObject): Promise<string>;
  snapshot(hash: string): Promise<SnapshotObject>;
  /** The chunk hashes a tree stands on (itself for a single-object tree), for the sweep. */
  objects(hash: string): Promise<{
    readonly chunks: readonly string[];
    readonly entries: () => AsyncGenerator<TreeEntry>;
  }>;
}

export function createTreeStore(
  store: BlobStore,
  keys: SessionKeys,
  queue?: WriteQueue,
): TreeStore {
  const key = (kind: ObjectKind, hash: string) => keys.object(kind, hash);
  const readTree = async (hash: string) =>
    decodeObject(
      parseTree,
      await readWhole(store, key("trees", hash), MAX_OBJECT_BYTES, "tree"),
      hash,
      "tree",
    );

  const chunksOf = async function* (hash: string, tree: TreeObject) {
    if ("entries" in tree) {
      checkEntryOrder(tree.entries, null, hash);
      yield tree.entries;
      return;
    }
    let last: string | null = null;
    for (const chunkHash of tree.chunks) {
      const chunk = await readTree(chunkHash);
      if (!("entries" in chunk))
        throw new IntegrityError({
          message: `snapshot tree ${hash} nests chunks`,
          context: { object: "tree", hash },
        });
      last = checkEntryOrder(chunk.entries, last, hash);
      yield chunk.entries;
    }
  };
  const entriesOf = async function* (hash: string, tree: TreeObject) {
    for await (const chunk of chunksOf(hash, tree)) yield* chunk;
  };

  return {
    async *entries(hash) {
      yield* entriesOf(hash, await readTree(hash));
    },
    async *chunks(hash) {
      yield* chunksOf(hash, await readTree(hash));
    },
    async write(tree) {
      const { bytes, hash } = encodeObject(tree);
      const put = () => putOnce(store, key("trees", hash), bytes, "application/json");
      if (queue) await queue.push(put);
      else await put();
      return hash;
    },
    async snapshot(hash) {
      const bytes = await readWhole(store, key("snapshots", hash), MAX_OBJECT_BYTES, "snapshot");
      const snapshot = decodeObject(
        (value) => snapshotSchema.safeParse(value).data,
        bytes,
        hash,
        "snapshot",
      );
      if (snapshot.session !== keys.session) {
        throw new IntegrityError({
          message: "the snapshot belongs to another session",
          context: { reason: "foreign_session" },
        });
      }
      return snapshot;
    },
    async objects(hash) {
      const tree = await readTree(hash);
      return { chunks: "chunks" in tree ? tree.chunks : [], entries: () => entriesOf(hash, tree) };
    },
  };
}

/** Builds one folder's tree as its entries arrive in order, writing a chunk whenever one fills. */
export function createTreeBuilder(trees: TreeStore) {
  let entries: TreeEntry[] = [];
  const chunks: string[] = [];
  return {
    /** Adds an entry; only one that fills a chunk returns a write to wait for. */
    add(entry: TreeEntry): Promise<void> | undefined {
      entries.push(entry);
      if (entries.length < TREE_CHUNK_ENTRIES) return undefined;
      const full = entries;
      entries = [];
      return trees.write({ version: 1, entries: full }).then((hash) => void chunks.push(hash));
    },
    /** The folder's tree hash. A folder of one chunk is that chunk: the same folder always has one hash. */
    async finish(): Promise<string> {
      if (chunks.length === 0) return trees.write({ version: 1, entries });
      if (entries.length > 0) chunks.push(await trees.write({ version: 1, entries }));
      if (chunks.length === 1) return chunks[0] as string;
      return trees.write({ version: 1, chunks });
    },
  };
}
