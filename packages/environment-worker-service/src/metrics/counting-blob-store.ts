import type { BlobStore } from "@open-managed-agents/blob-store";

/** Told of each object a checkpoint stores and each object a restore reads, with its size. */
export type StoreObjectObserver = (phase: "checkpoint" | "restore", bytes: number) => void;

/**
 * Wraps the checkpoint store so checkpoint and restore progress is seen whichever path the driver takes:
 * a stored object counts toward a running checkpoint, a read object toward a running restore. Sizes come
 * from the store's own answers (`put`'s info, `get`'s object), so bodies pass through untouched.
 */
export function countingBlobStore(store: BlobStore, observe: StoreObjectObserver): BlobStore {
  return {
    async put(key, body, options) {
      const info = await store.put(key, body, options);
      if (info) observe("checkpoint", info.size);
      return info;
    },
    async get(key) {
      const object = await store.get(key);
      if (object) observe("restore", object.size);
      return object;
    },
    head: (key) => store.head(key),
    delete: (key) => store.delete(key),
    list: (options) => store.list(options),
  };
}
