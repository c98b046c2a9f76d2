import { chmod, mkdir, open, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  type SnapshotSandbox,
  createLocalSnapshotSandbox,
  createWorkspaceSnapshots,
} from "../src/index.js";
import { localPlace } from "./support.js";

/** A local sandbox that runs `after` once the workspace was listed: a change between listing and reading. */
function afterListing(after: () => Promise<void>): SnapshotSandbox {
  const inner = createLocalSnapshotSandbox();
  return {
    ...inner,
    async run(name, script, args, signal) {
      const result = await inner.run(name, script, args, signal);
      if (name === "capture.sh" && args[0] === "list") await after();
      return result;
    },
  };
}

describe("a checkpoint refuses rather than leave out or store wrongly", () => {
  const place = async () => localPlace(createMemoryBlobStore(), "refusal");

  it("a file that vanishes after it was listed: sandbox_failed, unreadable, naming it", async () => {
    const { workspace, snapshots, dispose } = await place();
    try {
      await writeFile(join(workspace, "going.txt"), "soon gone");
      const sandbox = afterListing(() => rm(join(workspace, "going.txt")));
      await expect(snapshots.checkpoint({ sandbox, sessionId: "s" })).rejects.toMatchObject({
        code: "sandbox_failed",
        context: { reason: "unreadable", entry: "going.txt" },
      });
    } finally {
      await dispose();
    }
  });

  it("a file rewritten while it was read: sandbox_failed, changed_during_capture", async () => {
    const { workspace, snapshots, dispose } = await place();
    try {
      await writeFile(join(workspace, "busy.txt"), "first");
      const sandbox = afterListing(() => writeFile(join(workspace, "busy.txt"), "other"));
      await expect(snapshots.checkpoint({ sandbox, sessionId: "s" })).rejects.toMatchObject({
        code: "sandbox_failed",
        context: { reason: "changed_during_capture", entry: "busy.txt" },
      });
    } finally {
      await dispose();
    }
  });

  it("a path longer than PATH_MAX allows: archive_rejected, name_too_long", async () => {
    const { workspace, snapshots, dispose } = await place();
    try {
      // Made one level at a time from inside, as no single call may name the whole path.
      const script = `const fs = require("node:fs"); process.chdir(process.argv[1]);
        for (let i = 0; i < 21; i++) { fs.mkdirSync("d".repeat(200)); process.chdir("d".repeat(200)); }
        fs.writeFileSync("f", "x");`;
      execFileSync(process.execPath, ["-e", script, workspace]);
      await expect(
        snapshots.checkpoint({ sandbox: createLocalSnapshotSandbox(), sessionId: "s" }),
      ).rejects.toMatchObject({ code: "archive_rejected", context: { reason: "name_too_long" } });
    } finally {
      await dispose();
    }
  });

  it("a sparse file: archive_rejected, sparse_file", async () => {
    const { workspace, snapshots, dispose } = await place();
    try {
      const handle = await open(join(workspace, "holes.img"), "w");
      await handle.truncate(64 * 1024 * 1024);
      await handle.close();
      await expect(
        snapshots.checkpoint({ sandbox: createLocalSnapshotSandbox(), sessionId: "s" }),
      ).rejects.toMatchObject({
        code: "archive_rejected",
        context: { reason: "sparse_file", entry: "holes.img" },
      });
    } finally {
      await dispose();
    }
  });

  it("a fifo: archive_rejected, unsupported_type", async () => {
    const { workspace, snapshots, dispose } = await place();
    try {
      execFileSync("mkfifo", [join(workspace, "pipe")]);
      await expect(
        snapshots.checkpoint({ sandbox: createLocalSnapshotSandbox(), sessionId: "s" }),
      ).rejects.toMatchObject({
        code: "archive_rejected",
        context: { reason: "unsupported_type", entry: "pipe" },
      });
    } finally {
      await dispose();
    }
  });

  it("more entries than allowed: limit_exceeded", async () => {
    const root = await localPlace(createMemoryBlobStore(), "limit");
    try {
      const snapshots = createWorkspaceSnapshots({
        store: createMemoryBlobStore(),
        workspace: root.workspace,
        scratchDirectory: root.root,
        cacheDirectory: join(root.root, "cache"),
        maxEntries: 3,
      });
      for (const name of ["a", "b", "c", "d"]) await writeFile(join(root.workspace, name), name);
      await expect(
        snapshots.checkpoint({ sandbox: createLocalSnapshotSandbox(), sessionId: "s" }),
      ).rejects.toMatchObject({ code: "limit_exceeded" });
    } finally {
      await root.dispose();
    }
  });

  it("setuid and setgid bits are dropped, as workspace-archive's keptMode says", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    const target = await localPlace(store, "target");
    try {
      await writeFile(join(source.workspace, "tool"), "#!/bin/sh\n");
      await chmod(join(source.workspace, "tool"), 0o6755);
      const ref = await source.snapshots.checkpoint({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
      });
      await target.snapshots.restore({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
        id: ref.id,
      });
      expect((await stat(join(target.workspace, "tool"))).mode & 0o7777).toBe(0o755);
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });

  it("excluded paths are neither stored nor compared on restore", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source", { excludes: ["node_modules", "build/out"] });
    const target = await localPlace(store, "target", { excludes: ["node_modules", "build/out"] });
    try {
      await mkdir(join(source.workspace, "node_modules/x"), { recursive: true });
      await writeFile(join(source.workspace, "node_modules/x/index.js"), "skip");
      await mkdir(join(source.workspace, "build/out"), { recursive: true });
      await writeFile(join(source.workspace, "build/out/a"), "skip");
      await writeFile(join(source.workspace, "build/keep"), "keep");
      const ref = await source.snapshots.checkpoint({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
      });
      expect(ref.entries).toBe(2);
      await mkdir(join(target.workspace, "node_modules"));
      await target.snapshots.restore({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
        id: ref.id,
      });
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
