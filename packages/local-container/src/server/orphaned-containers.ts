import { readFileSync } from "node:fs";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as z from "zod";
import { killMarkedProcesses } from "./process-reaper.js";

/**
 * Which server made a container tree (or which launcher a temporary directory): written into the tree
 * (beside, never inside, what the container sees) when the container is created. A server killed without its exit handler leaves its trees; the
 * next server on the same root removes the trees whose server process is gone, and only those: servers
 * of other processes may share the root, and theirs are alive.
 */
export const OWNER_FILE = "owner.json";

const ownerSchema = z.object({
  serverId: z.string().regex(/^[0-9a-f]{1,64}$/),
  pid: z.number().int().positive(),
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat`), so a reused pid is not taken for it. */
  startTicks: z.number().int().nonnegative().nullable(),
});

/** The owner record of one container tree. */
export type ContainerOwner = z.output<typeof ownerSchema>;

/** Start time of process `pid` in clock ticks since boot, or null where `/proc` cannot tell. */
function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** The record this process writes for a server with id `serverId`. */
export function ownerRecord(serverId: string): ContainerOwner {
  return { serverId, pid: process.pid, startTicks: processStartTicks(process.pid) };
}

/** Writes the owner record into a container tree. */
export async function writeOwner(directory: string, owner: ContainerOwner): Promise<void> {
  await writeFile(join(directory, OWNER_FILE), JSON.stringify(owner), { mode: 0o600 });
}

/** Whether the process that wrote `owner` still runs (a pid reused by a later process does not count). */
export function isOwnerAlive(owner: ContainerOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a process of another user holds the pid, so it runs (and cannot be the same server only if
    // its start time says so).
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (owner.startTicks === null) return true;
  const ticks = processStartTicks(owner.pid);
  return ticks === null || ticks === owner.startTicks;
}

/** Parses an owner record; null when it is not one. */
export function parseOwner(text: string): ContainerOwner | null {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function readOwner(directory: string): Promise<ContainerOwner | null> {
  return parseOwner(await readFile(join(directory, OWNER_FILE), "utf8").catch(() => ""));
}

/**
 * Removes from `rootDir` the container trees whose server process is gone, after killing any process of
 * theirs still running (found by the marker every command carries). Trees without a readable owner record
 * (being created right now, or not made by a server) are left alone. Returns the ids removed.
 */
export async function removeOrphanedContainers(
  rootDir: string,
  isContainerId: (name: string) => boolean,
): Promise<string[]> {
  const entries = await readdir(rootDir, { withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !isContainerId(entry.name)) continue;
    const directory = join(rootDir, entry.name);
    const owner = await readOwner(directory);
    if (owner === null || isOwnerAlive(owner)) continue;
    killMarkedProcesses(`${owner.serverId}:${entry.name}`, "SIGKILL");
    await rm(directory, { recursive: true, force: true });
    removed.push(entry.name);
  }
  return removed;
}
