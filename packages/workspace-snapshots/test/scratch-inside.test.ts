import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox, createWorkspaceSnapshots } from "../src/index.js";
import { describeTree, mutate, populate, random, temporaryFolder } from "./workspace-fixture.js";

// A sandbox whose file routes reach only the workspace keeps its scratch there: it is never listed or compared.
describe("scratch inside the workspace", () => {
  it("is left out of snapshots and of the restore's proof", async () => {
    const root = await temporaryFolder("inside");
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const place = (name: string) =>
      createWorkspaceSnapshots({
        store,
        workspace: join(root, name),
        cacheDirectory: join(root, `${name}-cache`),
        scratchDirectory: join(root, name, ".scratch"),
        spoolDirectory: root,
      });
    await mkdir(join(root, "one"));
    await mkdir(join(root, "two"));
    const rng = random(77);
    await populate(join(root, "one"), rng);
    await writeFile(join(root, "one", "kept.txt"), "kept");
    const first = await place("one").checkpoint({ sandbox, sessionId: "s" });
    await mutate(join(root, "one"), rng, 5);
    // The scratch folder itself stays (it is the caller's); what is in it is never a snapshot's.
    const outside = (lines: string[]) => lines.filter((line) => !line.startsWith(".scratch"));
    const tree = outside(await describeTree(join(root, "one")));
    const second = await place("one").checkpoint({ sandbox, sessionId: "s" });
    expect(second.parent).toBe(first.id);
    await place("two").restore({ sandbox, sessionId: "s", id: second.id });
    expect(outside(await describeTree(join(root, "two")))).toEqual(tree);
    expect(tree.length).toBeGreaterThan(5);
  });
});
