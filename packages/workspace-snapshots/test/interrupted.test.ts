import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox, createWorkspaceSnapshots } from "../src/index.js";
import { expectRoundTrip, localPlace } from "./support.js";
import { mutate, populate, random } from "./workspace-fixture.js";

/** The store, failing the `failAt`th write of an object whose key matches `kinds`. */
function failingStore(
  inner: BlobStore,
  failAt: number,
  kinds = /\/(packs|blobs|trees)\//,
): BlobStore {
  let writes = 0;
  return {
    ...inner,
    put(key, body, options) {
      if (kinds.test(key)) {
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

const CASES = [
  { name: "failing write 1", failAt: 1, kinds: undefined },
  { name: "failing write 3", failAt: 3, kinds: undefined },
  // Blobs are written while the archive's next members are read: the failure still ends the capture.
  { name: "failing the first blob", failAt: 1, kinds: /\/blobs\// },
];

describe("an interrupted checkpoint", () => {
  for (const { name, failAt, kinds } of CASES) {
    it(`publishes nothing, and the next one works (${name})`, async () => {
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
        // Larger than a pack's contents: a blob of its own, and a member read after it.
        await writeFile(join(source.workspace, "big.bin"), randomBytes(300 * 1024));
        await writeFile(join(source.workspace, "zz-after-big.txt"), "read while big.bin is stored");
        const broken = createWorkspaceSnapshots({
          store: failingStore(store, failAt, kinds),
          workspace: source.workspace,
          cacheDirectory: join(source.root, "cache"),
          scratchDirectory: join(source.root, "scratch"),
          spoolDirectory: source.root,
        });
        await expect(broken.checkpoint({ sandbox, sessionId: "s" })).rejects.toThrow(
          "the store went away",
        );
        expect(await snapshotKeys(store)).toEqual([
          `workspace-snapshots/${first.session}/snapshots/${first.id}`,
        ]);

        await expectRoundTrip(source, target, sandbox, first.id);
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
