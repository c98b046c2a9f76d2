import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree } from "./workspace-fixture.js";

describe("a listing cache the store does not hold for the session", () => {
  it("costs a full listing, and the snapshot is still the whole tree", async () => {
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const place = await localPlace(store, "foreign-cache");
    const fresh = await localPlace(store, "foreign-cache-restored");
    try {
      await mkdir(join(place.workspace, "src"));
      await writeFile(join(place.workspace, "src/kept.txt"), "unchanged between the two\n");
      await writeFile(join(place.workspace, "top.txt"), "first\n");
      await place.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      await writeFile(join(place.workspace, "top.txt"), "second\n");

      // The cache names session A's snapshot: compared with it, B's snapshot would lack the unchanged file.
      const other = await place.snapshots.checkpoint({ sandbox, sessionId: "session-b" });
      expect(other.parent).toBeNull();
      await fresh.snapshots.restore({ sandbox, sessionId: "session-b", id: other.id });
      expect(await describeTree(fresh.workspace)).toEqual(await describeTree(place.workspace));

      // A cache naming no snapshot at all is the same.
      await writeFile(join(place.root, "cache", "snapshot"), "not a snapshot id");
      await writeFile(join(place.workspace, "top.txt"), "third\n");
      const again = await place.snapshots.checkpoint({ sandbox, sessionId: "session-b" });
      expect(again.parent).toBeNull();
      await fresh.snapshots.restore({ sandbox, sessionId: "session-b", id: again.id });
      expect(await describeTree(fresh.workspace)).toEqual(await describeTree(place.workspace));

      // And a cache of the session's own last snapshot is its parent.
      await writeFile(join(place.workspace, "top.txt"), "fourth\n");
      const next = await place.snapshots.checkpoint({ sandbox, sessionId: "session-b" });
      expect(next.parent).toBe(again.id);
      await fresh.snapshots.restore({ sandbox, sessionId: "session-b", id: next.id });
      expect(await describeTree(fresh.workspace)).toEqual(await describeTree(place.workspace));
    } finally {
      await place.dispose();
      await fresh.dispose();
    }
  });
});
