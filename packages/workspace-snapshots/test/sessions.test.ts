import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox, sessionKeyOf } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree } from "./workspace-fixture.js";

async function allKeys(store: BlobStore): Promise<string[]> {
  return (await store.list({})).objects.map((object) => object.key);
}

describe("two sessions in one store", () => {
  it("never see each other's objects", async () => {
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const one = await localPlace(store, "one");
    const two = await localPlace(store, "two");
    try {
      // The same bytes in both: content addressing must still not share objects across sessions.
      for (const place of [one, two]) {
        await mkdir(join(place.workspace, "src"));
        await writeFile(join(place.workspace, "src/same.txt"), "identical\n");
      }
      const first = await one.snapshots.checkpoint({ sandbox, sessionId: "session-one" });
      const second = await two.snapshots.checkpoint({ sandbox, sessionId: "session-two" });
      const keys = await allKeys(store);
      const prefixOne = `workspace-snapshots/${sessionKeyOf("session-one")}/`;
      const prefixTwo = `workspace-snapshots/${sessionKeyOf("session-two")}/`;
      expect(keys.every((key) => key.startsWith(prefixOne) || key.startsWith(prefixTwo))).toBe(
        true,
      );
      expect(keys.filter((key) => key.startsWith(prefixOne)).length).toBeGreaterThan(0);
      expect(keys.filter((key) => key.startsWith(prefixTwo)).length).toBeGreaterThan(0);

      // One session's snapshot id means nothing in the other's.
      await expect(
        two.snapshots.prepareRestore({ sessionId: "session-two", id: first.id }),
      ).rejects.toMatchObject({ code: "not_found" });
      // A sweep of one session with nothing published leaves the other whole.
      await one.snapshots.sweep({ sessionId: "session-one", published: [], graceMs: 0 });
      expect((await allKeys(store)).filter((key) => key.startsWith(prefixOne))).toEqual([]);
      const before = await describeTree(two.workspace);
      await writeFile(join(two.workspace, "src/same.txt"), "changed\n");
      const fresh = await localPlace(store, "fresh");
      try {
        await fresh.snapshots.restore({ sandbox, sessionId: "session-two", id: second.id });
        expect(await describeTree(fresh.workspace)).toEqual(before);
      } finally {
        await fresh.dispose();
      }
    } finally {
      await one.dispose();
      await two.dispose();
    }
  });
});
