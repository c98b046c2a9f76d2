import { execFileSync, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalSnapshotSandbox, createWorkspaceSnapshots } from "../src/index.js";
import { describeTree, mutate, populate, random, temporaryFolder } from "./workspace-fixture.js";

const PACKAGE = join(import.meta.dirname, "..");
const BUILT = join(PACKAGE, "node_modules/.test-build");

describe("a checkpoint in one process and a sweep in another, over one store", () => {
  beforeAll(() => {
    execFileSync(
      "npx",
      [
        "tsup",
        "test/fixtures/sweeper.ts",
        "--no-config",
        "--format",
        "esm",
        "--target",
        "es2022",
        "--out-dir",
        BUILT,
        "--loader",
        ".sh=text",
        "--silent",
      ],
      { cwd: PACKAGE, stdio: "inherit" },
    );
  });

  it("lose nothing: every snapshot the sweeper keeps restores exact, and each checkpoint builds on the last", async () => {
    const root = await temporaryFolder("two-processes");
    const storeRoot = join(root, "store");
    const stop = join(root, "stop");
    const workspace = join(root, "workspace");
    const restored = join(root, "restored");
    execFileSync("mkdir", ["-p", workspace, restored, join(root, "scratch")]);
    const store = createFsBlobStore({ rootDir: storeRoot });
    const place = (folder: string, cache: string) =>
      createWorkspaceSnapshots({
        store,
        workspace: folder,
        cacheDirectory: join(root, cache),
        scratchDirectory: join(root, "scratch"),
        spoolDirectory: root,
        partBytes: 64 * 1024,
      });
    const source = place(workspace, "cache-source");
    const target = place(restored, "cache-target");
    const sandbox = createLocalSnapshotSandbox();
    const sweeper = spawn(
      process.execPath,
      [join(BUILT, "sweeper.js"), storeRoot, "shared", stop],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let report = "";
    sweeper.stdout.on("data", (chunk: Buffer) => (report += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => sweeper.once("close", resolve));
    try {
      const rng = random(4242);
      await populate(workspace, rng);
      let previous: string | null = null;
      for (let round = 0; round < 8; round += 1) {
        if (round > 0) await mutate(workspace, rng, 4);
        const tree = await describeTree(workspace);
        const ref = await source.checkpoint({ sandbox, sessionId: "shared" });
        expect(ref.parent).toBe(previous);
        previous = ref.id;
        // The newest snapshot is what the sweeper keeps: it must restore exact while sweeps go on.
        execFileSync("rm", ["-rf", restored]);
        execFileSync("mkdir", [restored]);
        await target.restore({ sandbox, sessionId: "shared", id: ref.id });
        expect(await describeTree(restored)).toEqual(tree);
      }
    } finally {
      await writeFile(stop, "");
      await exited;
      execFileSync("rm", ["-rf", root]);
    }
    const { deleted, sweeps } = JSON.parse(report) as { deleted: number; sweeps: number };
    // The sweeper really swept: older snapshots' own objects went while the chain went on.
    expect(sweeps).toBeGreaterThan(0);
    expect(deleted).toBeGreaterThan(0);
  });
});
