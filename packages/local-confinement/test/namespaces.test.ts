/**
 * Kept mount namespaces: commands enter one namespace per table, no holder process outlives the
 * setup, and a released namespace is no longer held. Needs root on Linux; skipped elsewhere.
 * Namespace ids (`mnt:[inode]`) are reused once a namespace is gone, so two commands are compared
 * while both run.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MappedCommand,
  type MappedProcess,
  createMountNamespace,
  detectPathMappingMode,
  releaseMountNamespace,
  spawnMapped,
} from "../src/index.js";
import { settleMountNamespaces } from "../src/namespace-cache.js";
import { createMountSetup, unshareHolderArgs } from "../src/mounts.js";
import {
  heldNamespaceCount,
  isAlive,
  processesInNamespace,
  processesMatching,
  run,
  waitFor,
} from "./helpers.js";

let root: string;
let mounts: Record<string, string>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "local-process-namespace-"));
  mounts = { "/workspace": join(root, "workspace"), "/tmp": join(root, "tmp") };
  await Promise.all(Object.values(mounts).map((directory) => mkdir(directory)));
});

afterAll(async () => {
  releaseMountNamespace();
  await rm(root, { recursive: true, force: true });
});

type Start = (command: MappedCommand) => MappedProcess;

/** Namespace ids of two commands that run at the same time, and the first command's id alone. */
async function namespacesOfTwo(first: Start, second: Start): Promise<[string, string]> {
  const waiting = first({ command: "sh", args: ["-c", "readlink /proc/self/ns/mnt; read -r _"] });
  let firstId = "";
  waiting.child.stdout?.on("data", (chunk: Buffer) => (firstId += chunk.toString()));
  await waitFor(async () => firstId.endsWith("\n"));
  const secondId = (await run(second({ command: "readlink", args: ["/proc/self/ns/mnt"] }))).stdout;
  waiting.child.stdin?.end("\n");
  await waiting.exited;
  return [firstId.trim(), secondId.trim()];
}

describe.runIf(detectPathMappingMode() === "namespace")("kept mount namespaces", () => {
  it("createMountNamespace runs every command in one namespace and leaves no holder process", async () => {
    const heldBefore = await heldNamespaceCount();
    const namespace = await createMountNamespace(mounts);
    expect(namespace.mode).toBe("namespace");
    const [first, second] = await namespacesOfTwo(namespace.spawn, namespace.spawn);
    expect(second).toBe(first);
    const perCommand: Start = (command) =>
      spawnMapped({ ...command, mounts, reuseNamespace: false });
    const [own, other] = await namespacesOfTwo(perCommand, perCommand);
    expect(own).not.toBe(other);
    // The namespace is held by a descriptor of this process, not by a process inside it.
    expect(await processesInNamespace(first)).toEqual([]);
    expect(await heldNamespaceCount()).toBe(heldBefore + 1);
    namespace.dispose();
    expect(await heldNamespaceCount()).toBe(heldBefore);
    expect(() => namespace.spawn({ command: "true" })).toThrow(
      expect.objectContaining({ code: "invalid_request" }),
    );
  });

  it("a command running at dispose keeps its namespace until it exits", async () => {
    const namespace = await createMountNamespace(mounts);
    const mapped = namespace.spawn({
      command: "sh",
      args: ["-c", "read -r _; cat /workspace/late.txt"],
    });
    namespace.dispose();
    await writeFile(join(mounts["/workspace"] as string, "late.txt"), "still mapped\n");
    mapped.child.stdin?.end("go\n");
    expect(await run(mapped)).toMatchObject({ code: 0, stdout: "still mapped\n" });
  });

  it("spawnMapped keeps a namespace per table until it is released", async () => {
    const heldBefore = await heldNamespaceCount();
    await run(spawnMapped({ command: "true", mounts }));
    await settleMountNamespaces();
    const kept: Start = (command) => spawnMapped({ ...command, mounts });
    const [first, second] = await namespacesOfTwo(kept, kept);
    expect(second).toBe(first);
    expect(await processesInNamespace(first)).toEqual([]);
    expect(await heldNamespaceCount()).toBe(heldBefore + 1);
    expect(releaseMountNamespace({ ...mounts })).toBe(1);
    expect(await heldNamespaceCount()).toBe(heldBefore);
    expect(releaseMountNamespace(mounts)).toBe(0);
  });

  it("builds a new namespace once a host directory was replaced", async () => {
    const workspace = mounts["/workspace"] as string;
    const namespace = await createMountNamespace(mounts);
    const heldBefore = await heldNamespaceCount();
    try {
      await rm(workspace, { recursive: true });
      await mkdir(workspace);
      await writeFile(join(workspace, "new.txt"), "new directory\n");
      const inode = String((await stat(workspace)).ino);
      const check: MappedCommand = {
        command: "sh",
        args: ["-c", "stat -c %i /workspace && cat /workspace/new.txt"],
      };
      // The command right after the replacement runs in a namespace of its own while the kept one is rebuilt.
      expect(await run(namespace.spawn(check))).toMatchObject({
        code: 0,
        stdout: `${inode}\nnew directory\n`,
      });
      await waitFor(async () => (await heldNamespaceCount()) === heldBefore);
      const [first, second] = await namespacesOfTwo(namespace.spawn, namespace.spawn);
      expect(second).toBe(first);
      expect(await run(namespace.spawn(check))).toMatchObject({
        code: 0,
        stdout: `${inode}\nnew directory\n`,
      });
    } finally {
      namespace.dispose();
    }
  });

  it("a failed setup leaves no holder and each command reports the failure", async () => {
    const notADirectory = join(root, "file");
    await writeFile(notADirectory, "");
    const heldBefore = await heldNamespaceCount();
    const namespace = await createMountNamespace({ "/workspace": notADirectory });
    try {
      // Only this test's holder names this path; other servers on the host may run holders of their own.
      expect(await processesMatching(notADirectory)).toEqual([]);
      expect(await heldNamespaceCount()).toBe(heldBefore);
      const result = await run(namespace.spawn({ command: "true" }));
      expect(result.code).toBe(125);
      expect(result.stderr).toMatch(/mount|directory/i);
    } finally {
      namespace.dispose();
    }
  });

  it("leaves no staging directory behind for a large table, after a setup that worked or failed", async () => {
    const privateTmp = await mkdtemp(join(root, "private-tmp-"));
    const large: Record<string, string> = {};
    for (let index = 0; index < 9; index += 1) {
      large[`/mnt/part-${index}`] = join(root, `part-${index}`);
      await mkdir(large[`/mnt/part-${index}`] as string, { recursive: true });
    }
    const broken = { ...large, "/mnt/part-9": join(root, "file") };
    await writeFile(broken["/mnt/part-9"], "");
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    try {
      expect(
        (await run(spawnMapped({ command: "true", mounts: large, reuseNamespace: false }))).code,
      ).toBe(0);
      expect(
        (await run(spawnMapped({ command: "true", mounts: broken, reuseNamespace: false }))).code,
      ).toBe(125);
      const namespace = await createMountNamespace(large);
      expect(
        (await run(namespace.spawn({ command: "test", args: ["-d", "/mnt/part-8"] }))).code,
      ).toBe(0);
      namespace.dispose();
      (await createMountNamespace(broken)).dispose();
      expect(await readdir(privateTmp)).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  });

  it("a holder whose server died (stdin closed) exits by itself", async () => {
    const holder = spawn(
      "unshare",
      unshareHolderArgs(createMountSetup({ "/workspace": mounts["/workspace"] as string })),
      { stdio: "pipe" },
    );
    await new Promise((resolve) => holder.stdout.once("data", resolve));
    expect(await isAlive(holder.pid as number)).toBe(true);
    holder.stdin.destroy();
    await waitFor(async () => !(await isAlive(holder.pid as number)));
  });
});
