import { lstatSync, type Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ExcludeMatcher } from "./exclude-matcher.js";

/** One filesystem object met by {@link walkTree}. */
export interface WalkEntry {
  /** Root-relative path (`""` for the root). */
  readonly path: string;
  readonly absolute: string;
  readonly stats: Stats;
}

const STAT_BATCH = 64;

/**
 * Walks a tree depth first, parents before children, siblings sorted by name, so that the same tree
 * always yields the same sequence. Symlinks are reported, never followed. Entries that vanish while the
 * walk runs are left out.
 */
export async function* walkTree(root: string, excluded: ExcludeMatcher): AsyncGenerator<WalkEntry> {
  const stats = await lstat(root);
  yield { path: "", absolute: root, stats };
  if (stats.isDirectory()) yield* walkChildren(root, "", excluded);
}

async function* walkChildren(absolute: string, path: string, excluded: ExcludeMatcher): AsyncGenerator<WalkEntry> {
  const names = await readdir(absolute).catch(ignoreVanished<string[]>([]));
  names.sort();
  for (let start = 0; start < names.length; start += STAT_BATCH) {
    const batch = names.slice(start, start + STAT_BATCH);
    const entries = await Promise.all(
      batch.map(async (name): Promise<WalkEntry | null> => {
        const childPath = path === "" ? name : `${path}/${name}`;
        const childAbsolute = join(absolute, name);
        const childStats = lstatSyncOrNull(childAbsolute);
        if (childStats === null || excluded(childPath, childStats.isDirectory())) return null;
        return { path: childPath, absolute: childAbsolute, stats: childStats };
      }),
    );
    for (const entry of entries) {
      if (entry === null) continue;
      yield entry;
      if (entry.stats.isDirectory()) yield* walkChildren(entry.absolute, entry.path, excluded);
    }
  }
}

/** `lstat` through the callback API: far cheaper than the promise API when called thousands of times. */
function lstatSyncOrNull(path: string): Stats | null {
  return lstatSync(path, { throwIfNoEntry: false }) ?? null;
}

function ignoreVanished<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw error;
  };
}
