import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import {
  type SnapshotSandbox,
  createLocalSnapshotSandbox,
  createWorkspaceSnapshots,
} from "../src/index.js";
import { temporaryFolder } from "./workspace-fixture.js";

// What is spooled on the host has no name from the moment it is opened: a process killed at any step leaves
// nothing in the spool folder.
describe("the host's spool", () => {
  it("holds no named file at any step of a checkpoint or a restore", async () => {
    const root = await temporaryFolder("spool");
    const spool = join(root, "spool");
    await mkdir(spool);
    await mkdir(join(root, "one"));
    await mkdir(join(root, "two"));
    await writeFile(join(root, "one", "small.txt"), "small");
    await writeFile(join(root, "one", "large.bin"), Buffer.alloc(600 * 1024, 3));
    const seen: string[][] = [];
    const inner = createLocalSnapshotSandbox();
    // Looks at the spool folder whenever the sandbox is called: mid-capture and mid-restore.
    const sandbox: SnapshotSandbox = {
      run: async (name, script, args, signal) => (
        seen.push(await readdir(spool)), inner.run(name, script, args, signal)
      ),
      readFile: (path, signal) => inner.readFile(path, signal),
      writeFile: async (path, body, signal) => (
        seen.push(await readdir(spool)), inner.writeFile(path, body, signal)
      ),
    };
    const store = createMemoryBlobStore();
    const one = createWorkspaceSnapshots({
      store,
      workspace: join(root, "one"),
      cacheDirectory: join(root, "c1"),
      scratchDirectory: root,
      spoolDirectory: spool,
    });
    const two = createWorkspaceSnapshots({
      store,
      workspace: join(root, "two"),
      cacheDirectory: join(root, "c2"),
      scratchDirectory: root,
      spoolDirectory: spool,
    });
    const ref = await one.checkpoint({ sandbox, sessionId: "s" });
    await two.restore({ sandbox, sessionId: "s", id: ref.id });
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.flat()).toEqual([]);
    expect(await readdir(spool)).toEqual([]);
  });
});
