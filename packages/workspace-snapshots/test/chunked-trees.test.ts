import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox } from "../src/index.js";
import { TREE_CHUNK_ENTRIES } from "../src/stored-objects.js";
import { localPlace } from "./support.js";
import { describeTree } from "./workspace-fixture.js";

// Folders past one tree chunk: a later checkpoint merges their chunks (read ahead) with changes in each.
describe("folders whose trees are chunked", () => {
  it("restore byte-identical after changes in every chunk", async () => {
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const source = await localPlace(store, "source");
    const target = await localPlace(store, "target");
    const count = TREE_CHUNK_ENTRIES * 2 + 100;
    const name = (index: number) => `f${String(index).padStart(5, "0")}`;
    try {
      for (const [dir, entries] of [
        ["one", count],
        ["two/deep", TREE_CHUNK_ENTRIES + 1],
      ] as const) {
        await mkdir(join(source.workspace, dir), { recursive: true });
        for (let index = 0; index < entries; index += 1)
          await writeFile(join(source.workspace, dir, name(index)), `${dir} ${index}`);
      }
      const first = await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      for (let index = 7; index < count; index += 401)
        await writeFile(join(source.workspace, "one", name(index)), `changed ${index}`);
      await rm(join(source.workspace, "two/deep", name(TREE_CHUNK_ENTRIES)));
      await writeFile(join(source.workspace, "two/deep", ".first"), "sorts first");
      const tree = await describeTree(source.workspace);
      const second = await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      expect(second.parent).toBe(first.id);
      await target.snapshots.restore({ sandbox, sessionId: "session-a", id: second.id });
      expect(await describeTree(target.workspace)).toEqual(tree);
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
