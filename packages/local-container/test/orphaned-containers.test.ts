/**
 * A container server killed with SIGKILL (no exit handler runs) leaves its container trees and what its
 * commands left running; the next server on the same root removes them, and nothing of a server that still
 * runs, in another process, on that root.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { removeAbandonedTemporaryDirectories } from "../src/launcher/abandoned-directories.js";
import { ownerRecord } from "../src/server/orphaned-containers.js";
import { createLocalContainerServer } from "../src/server/server.js";

const CHILD = fileURLToPath(new URL("./fixtures/server-child.mjs", import.meta.url));
const children: ChildProcess[] = [];
const roots: string[] = [];
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

/** Starts a server in a child process with one container and a process that outlives its command. */
async function serverInChild(
  rootDir: string,
  containerId: string,
): Promise<{ child: ChildProcess; sleeper: number }> {
  const child = spawn(process.execPath, [CHILD, rootDir, containerId, "unconfined-unsafe"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const [line] = await Promise.race([
    new Promise<string[]>((resolve) => lines.once("line", (first: string) => resolve([first]))),
    new Promise<never>((_resolve, reject) =>
      child.once("exit", (code) => reject(new Error(`server child exited ${code}`))),
    ),
  ]);
  return { child, sleeper: (JSON.parse(line ?? "{}") as { pid: number }).pid };
}

/** Whether a process runs (a zombie waiting for its reaper does not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once("exit", resolve));
}

describe("a restarted container server", () => {
  it("removes the trees and processes a killed server left on its root, and leaves a live server's alone", async () => {
    const rootDir = await mkdtemp(join(tmpdir(), "oma-local-container-orphans-"));
    roots.push(rootDir);
    const killed = await serverInChild(rootDir, "killed-one");
    const live = await serverInChild(rootDir, "live-one");
    killed.child.kill("SIGKILL");
    await exited(killed.child);
    // What the killed server left: its tree, and a process its command started outside its group.
    expect(existsSync(join(rootDir, "killed-one", "workspace", "file"))).toBe(true);
    expect(isRunning(killed.sleeper)).toBe(true);

    const restarted = await createLocalContainerServer({
      rootDir,
      confinement: "unconfined-unsafe",
    });
    try {
      expect(existsSync(join(rootDir, "killed-one"))).toBe(false);
      // SIGKILL is sent before the start resolves; the kernel ends the process on its own time.
      await expect
        .poll(() => isRunning(killed.sleeper), { timeout: 30_000, interval: 100 })
        .toBe(false);
      expect(existsSync(join(rootDir, "live-one", "workspace", "file"))).toBe(true);
      expect(isRunning(live.sleeper)).toBe(true);
    } finally {
      await restarted.close();
      live.child.kill("SIGKILL");
      await exited(live.child);
      process.kill(live.sleeper, "SIGKILL");
    }
  }, 120_000);
});

describe("a starting launcher", () => {
  it("removes the temporary directories of launchers that are gone, and only those", async () => {
    const parent = await mkdtemp(join(tmpdir(), "oma-launcher-temporaries-"));
    roots.push(parent);
    // A pid that just ended: the owner of an abandoned directory.
    const gonePid = Number(execFileSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).trim());
    const plant = async (name: string, owner: object | null): Promise<string> => {
      const directory = join(parent, name);
      await mkdir(join(directory, "container-a", "workspace"), { recursive: true });
      if (owner !== null) await writeFile(join(directory, "owner.json"), JSON.stringify(owner));
      return directory;
    };
    const abandoned = await plant("oma-local-containers-gone", {
      ...ownerRecord("0a1b2c"),
      pid: gonePid,
    });
    const abandonedState = await plant("oma-local-bridge-state-gone", {
      ...ownerRecord("0a1b2c"),
      pid: gonePid,
    });
    const live = await plant("oma-local-containers-live", ownerRecord("3d4e5f"));
    // The same pid started later is another process: its start time tells them apart.
    const reused = await plant("oma-local-containers-reused", {
      ...ownerRecord("3d4e5f"),
      startTicks: 0,
    });
    const unowned = await plant("oma-local-containers-unowned", null);
    const foreign = await plant("something-else", { ...ownerRecord("0a1b2c"), pid: gonePid });

    expect(await removeAbandonedTemporaryDirectories(parent)).toBe(3);
    expect([abandoned, abandonedState, reused].map((directory) => existsSync(directory))).toEqual([
      false,
      false,
      false,
    ]);
    expect([live, unowned, foreign].map((directory) => existsSync(directory))).toEqual([
      true,
      true,
      true,
    ]);
  });
});
