import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox, createWorkspaceSnapshots } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree, mutate, populate, random } from "./workspace-fixture.js";

/** The store, failing the `failAt`th write of a pack or blob. */
function failingStore(inner: BlobStore, failAt: number): BlobStore {
  let writes = 0;
  return {
    ...inner,
    put(key, body, options) {
      if (/\/(packs|blobs|trees)\//.test(key)) {
        writes += 1;
        if (writes === failAt) return Promise.reject(new Error("the store went away"));
      }
      return inner.put(key, body, options);
    },
  };
}

const snapshotKeys = async (store: BlobStore) =>
  (await store.list({})).objects
    .map((object) => object.key)
    .filter((key) => key.includes("/snapshots/"));

describe("an interrupted checkpoint", () => {
  for (const failAt of [1, 3]) {
    it(`publishes nothing, and the next one works (failing write ${failAt})`, async () => {
      const store = createMemoryBlobStore();
      const source = await localPlace(store, "source");
      const target = await localPlace(store, "target");
      const sandbox = createLocalSnapshotSandbox();
      const rng = random(100 + failAt);
      try {
        await populate(source.workspace, rng);
        const first = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
        await mutate(source.workspace, rng, 6);
        await writeFile(join(source.workspace, "new.txt"), "new content");
        const broken = createWorkspaceSnapshots({
          store: failingStore(store, failAt),
          workspace: source.workspace,
          cacheDirectory: join(source.root, "cache"),
          scratchDirectory: join(source.root, "scratch"),
          spoolDirectory: source.root,
        });
        await expect(broken.checkpoint({ sandbox, sessionId: "s" })).rejects.toThrow();
        expect(await snapshotKeys(store)).toEqual([
          `workspace-snapshots/${first.session}/snapshots/${first.id}`,
        ]);

        const tree = await describeTree(source.workspace);
        const second = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
        expect(second.parent).toBe(first.id);
        await target.snapshots.restore({ sandbox, sessionId: "s", id: second.id });
        expect(await describeTree(target.workspace)).toEqual(tree);
      } finally {
        await source.dispose();
        await target.dispose();
      }
    });
  }

  it("an aborted checkpoint publishes nothing", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    try {
      await populate(source.workspace, random(7));
      const controller = new AbortController();
      controller.abort(new Error("stopped"));
      await expect(
        source.snapshots.checkpoint({
          sandbox: createLocalSnapshotSandbox(),
          sessionId: "s",
          signal: controller.signal,
        }),
      ).rejects.toThrow();
      expect(await snapshotKeys(store)).toEqual([]);
    } finally {
      await source.dispose();
    }
  });
});
