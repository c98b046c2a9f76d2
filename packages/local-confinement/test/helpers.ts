import { readFile, readdir, readlink } from "node:fs/promises";
import type { MappedProcess } from "../src/index.js";

/** Collects a process's output and exit code. */
export async function run(
  process: MappedProcess,
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  let stdout = "";
  let stderr = "";
  process.child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  process.child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = await process.exited;
  return { stdout, stderr, code: exit.code };
}

/** Polls `condition` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A zombie waiting for its new parent to reap it counts as dead: it runs no more code. */
export async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

/** Pids of live processes whose mount namespace is `namespaceId` (`mnt:[…]`). */
export async function processesInNamespace(namespaceId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const link = await readlink(`/proc/${entry}/ns/mnt`).catch(() => null);
    if (link === namespaceId && (await isAlive(Number(entry)))) pids.push(Number(entry));
  }
  return pids;
}

/** How many mount namespaces this process holds descriptors on. */
export async function heldNamespaceCount(): Promise<number> {
  let count = 0;
  for (const entry of await readdir("/proc/self/fd")) {
    if ((await readlink(`/proc/self/fd/${entry}`).catch(() => ""))?.startsWith("mnt:[")) count += 1;
  }
  return count;
}

/** Pids of live processes whose command line contains `needle`. */
export async function processesMatching(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (commandLine.includes(needle) && (await isAlive(Number(entry)))) pids.push(Number(entry));
  }
  return pids;
}
