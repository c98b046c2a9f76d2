import type { BlobObjectInfo, BlobStore } from "@open-managed-agents/blob-store";
import { HEX64, type SessionKeys } from "./keys.js";
import { createTreeStore } from "./stored-objects.js";

/** What a sweep did. */
export interface SweepResult {
  readonly kept: number;
  readonly deleted: number;
}

/**
 * Deletes a session's objects that no kept snapshot reaches and that are older than `cutoff`. Kept snapshots are
 * the published ones and every snapshot object younger than the cutoff (a checkpoint may build on it); marks
 * follow each through its trees to packs and blobs. A published snapshot that is missing or altered stops the
 * sweep before anything is deleted. Run under the session's lock (see store-lock.ts).
 */
export async function sweepSession(
  store: BlobStore,
  keys: SessionKeys,
  published: readonly string[],
  cutoff: number,
): Promise<SweepResult> {
  const objects: BlobObjectInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix: keys.prefix, cursor });
    objects.push(...page.objects);
    cursor = page.cursor;
  } while (cursor);

  const trees = createTreeStore(store, keys);
  const marked = new Set<string>();
  const markTree = async (hash: string): Promise<void> => {
    const key = keys.object("trees", hash);
    if (marked.has(key)) return;
    marked.add(key);
    const tree = await trees.objects(hash);
    for (const chunk of tree.chunks) marked.add(keys.object("trees", chunk));
    for await (const entry of tree.entries()) {
      if (entry.type === "dir") await markTree(entry.tree);
      else if (entry.type === "file" && entry.hash !== undefined) {
        marked.add(
          entry.pack === undefined
            ? keys.object("blobs", entry.hash)
            : keys.object("packs", entry.pack),
        );
      }
    }
  };
  const markSnapshot = async (id: string) => {
    const snapshot = await trees.snapshot(id);
    marked.add(keys.object("snapshots", id));
    await markTree(snapshot.tree);
  };
  for (const id of published) await markSnapshot(id);
  const snapshotsPrefix = keys.object("snapshots", "");
  const young = (object: BlobObjectInfo) => object.uploaded.getTime() > cutoff;
  for (const object of objects.filter(young)) {
    const id = object.key.slice(snapshotsPrefix.length);
    // A young snapshot that cannot be read is kept by its age and marks nothing.
    if (object.key.startsWith(snapshotsPrefix) && HEX64.test(id))
      await markSnapshot(id).catch(() => undefined);
  }

  const doomed = objects.filter(
    (object) => object.key !== keys.lock && !marked.has(object.key) && !young(object),
  );
  // Snapshots go first: a snapshot still present never names an object already deleted.
  doomed.sort(
    (left, right) =>
      Number(right.key.startsWith(snapshotsPrefix)) - Number(left.key.startsWith(snapshotsPrefix)),
  );
  for (const object of doomed) await store.delete(object.key);
  return { kept: objects.length - doomed.length, deleted: doomed.length };
}
