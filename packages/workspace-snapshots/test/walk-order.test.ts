import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree } from "./workspace-fixture.js";

// A folder's own listing record sorts after its children whose names start below `/` (`.env`, `-x`, ` a`), so
// a later checkpoint meets a changed folder's record after some of its changed children.
describe("a later checkpoint of a folder whose children sort before its own record", () => {
  it("restores byte-identical", async () => {
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const source = await localPlace(store, "source");
    const target = await localPlace(store, "target");
    try {
      const ws = source.workspace;
      await mkdir(join(ws, "pkg/.cache"), { recursive: true });
      await mkdir(join(ws, "pkg/src"), { recursive: true });
      for (const name of [".env", "-x", " a", "b", ".cache/one", "src/c"])
        await writeFile(join(ws, "pkg", name), `first ${name}`);
      await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      for (const name of [".env", "-x", " a", ".cache/one", "src/c"])
        await writeFile(join(ws, "pkg", name), `second ${name}!`);
      await writeFile(join(ws, "pkg/new"), "new");
      await utimes(join(ws, "pkg"), 1_700_000_000, 1_700_000_000);
      const tree = await describeTree(ws);
      const ref = await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      await rm(target.workspace, { recursive: true, force: true });
      await mkdir(target.workspace);
      await target.snapshots.restore({ sandbox, sessionId: "session-a", id: ref.id });
      expect(await describeTree(target.workspace)).toEqual(tree);

      // Folders made, removed and replaced, each with a child that sorts before the folder's own record.
      await mkdir(join(ws, "gone"));
      await writeFile(join(ws, "gone/.x"), "x");
      await writeFile(join(ws, "gone/y"), "y");
      await writeFile(join(ws, "was-file"), "a file");
      await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      await mkdir(join(ws, "fresh"));
      await writeFile(join(ws, "fresh/.dot"), "dot");
      await writeFile(join(ws, "fresh/z"), "z");
      await rm(join(ws, "gone"), { recursive: true });
      await rm(join(ws, "pkg/.cache"), { recursive: true });
      await writeFile(join(ws, "pkg/.cache"), "now a file");
      await rm(join(ws, "was-file"));
      await mkdir(join(ws, "was-file"));
      await writeFile(join(ws, "was-file/.in"), "in");
      const last = await describeTree(ws);
      const lastRef = await source.snapshots.checkpoint({ sandbox, sessionId: "session-a" });
      await rm(target.workspace, { recursive: true, force: true });
      await mkdir(target.workspace);
      await target.snapshots.restore({ sandbox, sessionId: "session-a", id: lastRef.id });
      expect(await describeTree(target.workspace)).toEqual(last);
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
