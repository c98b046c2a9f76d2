import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree, mutate, populate, random, temporaryFolder } from "./workspace-fixture.js";

// Each seed takes five snapshots of a changing workspace and restores every one into a fresh sandbox, verified
// there; `pnpm test:chaos` runs thirty. Even seeds keep their objects in the fs store, whose bodies are byte
// streams that a restore reads into its own buffers; odd seeds in the memory store.
const SEEDS = Number(process.env.SNAPSHOT_SEEDS ?? 4);

describe("a chain of five snapshots", () => {
  for (let seed = 1; seed <= SEEDS; seed += 1) {
    const kind = seed % 2 === 0 ? "fs" : "memory";
    it(`restores every link byte-identical (seed ${seed}, ${kind} store)`, async () => {
      const store: BlobStore =
        kind === "fs"
          ? createFsBlobStore({ rootDir: await temporaryFolder(`chain-store-${seed}`) })
          : createMemoryBlobStore();
      const sandbox = createLocalSnapshotSandbox();
      const source = await localPlace(store, "source");
      const target = await localPlace(store, "target");
      const rng = random(seed);
      try {
        await populate(source.workspace, rng);
        const taken: Array<{ id: string; tree: string[] }> = [];
        for (let link = 0; link < 5; link += 1) {
          if (link > 0) await mutate(source.workspace, rng, 1 + rng.int(8));
          const tree = await describeTree(source.workspace);
          const ref = await source.snapshots.checkpoint({
            sandbox,
            sessionId: "session-a",
            source: { link: String(link) },
          });
          expect(ref.parent).toBe(link === 0 ? null : (taken[link - 1]?.id ?? null));
          taken.push({ id: ref.id, tree });
        }
        // Oldest first, each into a fresh workspace.
        for (const { id, tree } of taken) {
          await rm(target.workspace, { recursive: true, force: true });
          const { mkdir } = await import("node:fs/promises");
          await mkdir(target.workspace);
          await target.snapshots.restore({ sandbox, sessionId: "session-a", id });
          expect(await describeTree(target.workspace)).toEqual(tree);
        }
        // The restored sandbox continues the chain from its cache: a change there checkpoints incrementally.
        await mutate(target.workspace, rng, 3);
        const after = await describeTree(target.workspace);
        const next = await target.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
        expect(next.parent).toBe(taken[taken.length - 1]?.id);
        await rm(source.workspace, { recursive: true, force: true });
        const { mkdir } = await import("node:fs/promises");
        await mkdir(source.workspace);
        await source.snapshots.restore({ sandbox, sessionId: "session-a", id: next.id });
        expect(await describeTree(source.workspace)).toEqual(after);
        expect(join(source.workspace)).toBeTruthy();
      } finally {
        await source.dispose();
        await target.dispose();
      }
    });
  }
});
