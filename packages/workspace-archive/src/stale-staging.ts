import { lstat, readdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { removeTree } from "./remove-tree.js";

/** Prefix of the folder an extraction stages into; the owning process id follows it. */
export function stagingPrefix(base: string): string {
  return `.${base}.oma-staging-${process.pid}-`;
}

/** Name of the folder the previous tree is parked in during a replace; the owning process id is inside. */
export function previousName(base: string, suffix: string): string {
  return `.${base}.oma-previous-${process.pid}-${suffix}`;
}

const STALE_PATTERN = /^\.(.+)\.oma-(staging|previous)-(\d+)-[A-Za-z0-9]+$/;

/**
 * Removes what an extraction killed mid-way left in `folder` for destination `base`: staging folders and
 * parked previous trees of processes that no longer run. A previous tree whose destination is missing was
 * parked just before the kill and is moved back, so the destination is never lost. Folders of live
 * processes (this one included: a concurrent extraction) are left alone.
 */
export async function removeStaleStaging(
  folder: string,
  base: string,
  destination: string,
): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const match = STALE_PATTERN.exec(name);
    if (!match || match[1] !== base || isAlive(Number(match[3]))) continue;
    const path = join(folder, name);
    if (match[2] === "previous" && (await lstat(destination).catch(() => null)) === null) {
      await rename(path, destination).catch(() => undefined);
      continue;
    }
    await removeTree(path);
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
