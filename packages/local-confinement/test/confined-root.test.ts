/**
 * `createConfinedRoot`: one bubblewrap confinement per container, entered by every command. Runs where
 * bubblewrap can (root on Linux with bwrap and overlayfs); elsewhere the typed refusal is what is tested.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConfinedRoot, createConfinedRoot, isConfinementAvailable } from "../src/index.js";
import { enterArgs, holderArgs } from "../src/bubblewrap-args.js";
import { isAlive, run, waitFor } from "./helpers.js";

const available = isConfinementAvailable();

describe.skipIf(available)("without bubblewrap", () => {
  it("refuses with capability_unsupported naming what to install", async () => {
    const error = await createConfinedRoot({ tree: join(tmpdir(), "never"), mounts: {} }).catch(
      (caught: unknown) => caught,
    );
    expect(ManagedRuntimeError.hasCode(error, "capability_unsupported")).toBe(true);
    expect(String((error as Error).message)).toMatch(/apt-get install -y bubblewrap/);
  });
});

describe("argument builders", () => {
  it("drops every capability, unshares all but the network by default, and never follows the command's PATH for its tools", () => {
    const plan = { overlays: ["usr", "etc"], symlinks: [["bin", "usr/bin"]] as const };
    const command = holderArgs({
      tree: "/t",
      mounts: { "/workspace": "/t/w" },
      plan,
      network: "shared",
      hostname: "h",
      bwrap: "/usr/bin/bwrap",
      infoFd: 3,
      argsFd: 4,
    });
    const options = command.bwrapOptions.split("\0");
    expect(options).toEqual(
      expect.arrayContaining([
        "--unshare-all",
        "--share-net",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
      ]),
    );
    expect(options.join(" ")).toContain("--bind /t/rootfs / ");
    // Host paths go through the descriptor, never onto bubblewrap's command line.
    expect(command.argv.slice(command.argv.indexOf("/usr/bin/bwrap"))).toEqual([
      "/usr/bin/bwrap",
      "--args",
      "4",
      "--",
      "/bin/sh",
      "-c",
      "echo ready; read -r _ || true",
    ]);
    expect(
      holderArgs({
        tree: "/t",
        mounts: {},
        plan,
        network: "none",
        hostname: "h",
        bwrap: "/usr/bin/bwrap",
        infoFd: 3,
        argsFd: 4,
      }).bwrapOptions.split("\0"),
    ).not.toContain("--share-net");
    const entered = enterArgs({
      namespaces: [
        ["--user", 3],
        ["--mount", 4],
      ],
      limits: { maxProcesses: 5, maxOpenFiles: 6, maxFileBytes: 7, maxMemoryBytes: 8 },
      nsenter: "/usr/bin/nsenter",
      setpriv: "/usr/bin/setpriv",
      shell: "/bin/bash",
      cwd: "/w",
      command: "sh",
      args: ["-c", "x"],
    });
    expect(entered.slice(0, 5)).toEqual(["--nproc=5", "--nofile=6", "--fsize=7", "--as=8", "--"]);
    expect(entered).toEqual(
      expect.arrayContaining([
        "--user=/proc/self/fd/3",
        "--mount=/proc/self/fd/4",
        "/usr/bin/setpriv",
        "--bounding-set=-all",
        "--no-new-privs",
      ]),
    );
  });
});

describe.skipIf(!available)("a confined root", () => {
  let tree: string;
  let root: ConfinedRoot;
  const sh = async (script: string) =>
    run(root.spawn({ command: "sh", args: ["-c", script], env: { PATH: "/usr/bin:/bin" } }));

  beforeAll(async () => {
    tree = await mkdtemp(join(tmpdir(), "oma-confined-test-"));
    for (const directory of ["workspace", "tmp"]) mkdirSync(join(tree, directory));
    root = await createConfinedRoot({
      tree,
      mounts: { "/workspace": join(tree, "workspace"), "/tmp": join(tree, "tmp") },
      limits: { maxProcesses: 32 },
    });
  });
  afterAll(async () => {
    root?.dispose();
    await root?.ended;
    await rm(tree, { recursive: true, force: true });
  });

  it("gives commands their own namespaces and no capability, and they share one PID namespace", async () => {
    const first = await sh(
      "readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/user; grep CapEff /proc/self/status",
    );
    const second = await sh("readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/user");
    const [pid, mnt, user] = first.stdout.split("\n");
    expect([pid, mnt, user]).not.toContain(readlinkSync("/proc/self/ns/pid"));
    expect(mnt).not.toBe(readlinkSync("/proc/self/ns/mnt"));
    expect(user).not.toBe(readlinkSync("/proc/self/ns/user"));
    expect(second.stdout).toBe(`${[pid, mnt, user].join("\n")}\n`);
    expect(first.stdout).toContain("CapEff:\t0000000000000000");
    // None of the server's descriptors on the container's namespaces reaches the command.
    expect((await sh("ls /proc/self/fd")).stdout.trim().split("\n").sort()).toEqual([
      "0",
      "1",
      "2",
      "3",
    ]);
    expect((await sh("ls /")).stdout).toContain("workspace\n");
    expect((await sh("cat /proc/1/cmdline | tr '\\0' ' '")).stdout).not.toContain(tree);
  });

  it("writes to /etc, /usr and / land in the container's tree; the host's stay as they were", async () => {
    const marker = `oma-${Date.now()}`;
    const result = await sh(
      `echo a > /etc/${marker} && echo b > /usr/${marker} && echo c > /${marker} && cat /etc/${marker} /usr/${marker} /${marker}`,
    );
    expect(result).toMatchObject({ code: 0, stdout: "a\nb\nc\n" });
    for (const path of [`/etc/${marker}`, `/usr/${marker}`, `/${marker}`])
      expect(existsSync(path)).toBe(false);
    expect(readFileSync(join(tree, "upper", "etc", marker), "utf8")).toBe("a\n");
    expect(readFileSync(join(tree, "rootfs", marker), "utf8")).toBe("c\n");
  });

  it("resolves host paths inside the root: a symlink to / reaches the container's root, not the host's", async () => {
    writeFileSync(join(tree, "tmp", "real.txt"), "inside");
    symlinkSync("/", join(tree, "workspace", "top"));
    symlinkSync("../tmp/real.txt", join(tree, "workspace", "relative"));
    expect(root.hostPath("/workspace/top/etc/hostname")).toMatch(
      new RegExp(`^/proc/${process.pid}/fd/\\d+/etc/hostname$`),
    );
    expect(readFileSync(root.hostPath("/workspace/top/etc/hostname"), "utf8")).toBe(
      readFileSync("/etc/hostname", "utf8"),
    );
    expect(root.hostPath("/workspace/relative")).toBe(join(tree, "tmp", "real.txt"));
    expect(root.hostPath("/workspace/relative", { followFinal: false })).toBe(
      join(tree, "workspace", "relative"),
    );
    expect(root.hostPath("/workspace/top/tmp/real.txt")).toBe(join(tree, "tmp", "real.txt"));
    symlinkSync("loop", join(tree, "workspace", "loop"));
    expect(() => root.hostPath("/workspace/loop")).toThrow(/too many levels of symbolic links/);
  });

  it("bounds the container's processes together", async () => {
    const result = await sh(
      "i=0; while [ $i -lt 64 ]; do i=$((i+1)); sleep 30 >/dev/null 2>&1 & done; echo never",
    );
    expect(result.stderr).toContain("Cannot fork");
    expect(result.stdout).toBe("");
    expect(root.processCgroup).toBe(true);
    await sh("kill -9 -1");
  }, 30_000);

  it("ending it kills every process left inside", async () => {
    const other = await createConfinedRoot({ tree: join(tree, "second"), mounts: {} });
    const started = other.spawn({
      command: "sh",
      args: ["-c", "sleep 300 >/dev/null 2>&1 & echo started"],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
    });
    expect((await run(started)).stdout).toBe("started\n");
    const namespace = readlinkSync(`/proc/${other.pid}/ns/pid`);
    other.dispose();
    await other.ended;
    const inside = async (): Promise<number[]> => {
      const pids: number[] = [];
      for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
        try {
          if (readlinkSync(`/proc/${entry}/ns/pid`) === namespace && (await isAlive(Number(entry))))
            pids.push(Number(entry));
        } catch {
          // Gone meanwhile.
        }
      }
      return pids;
    };
    await waitFor(async () => (await inside()).length === 0, 10_000);
    expect(await inside()).toEqual([]);
  });
});
