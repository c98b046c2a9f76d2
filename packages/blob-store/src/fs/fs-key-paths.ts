import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { compareBlobKeys, utf8Length } from "../blob-key.js";

// Every key segment but the last names a directory `<segment>.d`; the last names a file
// `<segment>.blob`. The distinct suffixes let `a` and `a/b` coexist, and leave other names (temporary
// files) out of listings.
const DIRECTORY_SUFFIX = ".d";
const OBJECT_SUFFIX = ".blob";
/** Longest key segment, in UTF-8 bytes, a 255-byte file name can hold with its suffix. */
export const MAX_FS_SEGMENT_BYTES = 255 - OBJECT_SUFFIX.length;

/** Path of the object file for a valid key, or null when a segment is too long to be a file name. */
export function objectPathForKey(rootDir: string, key: string): string | null {
  const segments = key.split("/");
  if (segments.some((segment) => utf8Length(segment) > MAX_FS_SEGMENT_BYTES)) return null;
  const last = segments.pop() ?? "";
  return join(
    rootDir,
    ...segments.map((segment) => segment + DIRECTORY_SUFFIX),
    last + OBJECT_SUFFIX,
  );
}

/** Directories between the root and an object file, innermost first. */
export function parentDirectories(rootDir: string, key: string): string[] {
  const segments = key.split("/").slice(0, -1);
  return segments.map((_, index) =>
    join(
      rootDir,
      ...segments.slice(0, segments.length - index).map((segment) => segment + DIRECTORY_SUFFIX),
    ),
  );
}

interface TreeEntry {
  readonly name: string;
  readonly isDirectory: boolean;
  /** The segment, with `/` appended for a directory, so sibling order equals key order. */
  readonly sortName: string;
}

/**
 * Yields stored keys in code-point order that start with `prefix` and sort after `cursor`, skipping
 * whole directories that cannot hold such a key.
 */
export async function* walkKeys(
  rootDir: string,
  prefix: string,
  cursor: string | undefined,
  keyPrefix = "",
): AsyncGenerator<string> {
  for (const entry of await readSortedEntries(rootDir)) {
    const path = join(rootDir, entry.name);
    const candidate = keyPrefix + entry.sortName;
    if (entry.isDirectory) {
      const coversPrefix = candidate.startsWith(prefix) || prefix.startsWith(candidate);
      const beforeCursor =
        cursor !== undefined &&
        !cursor.startsWith(candidate) &&
        compareBlobKeys(candidate, cursor) < 0;
      if (coversPrefix && !beforeCursor) yield* walkKeys(path, prefix, cursor, candidate);
    } else if (
      candidate.startsWith(prefix) &&
      (cursor === undefined || compareBlobKeys(candidate, cursor) > 0)
    ) {
      yield candidate;
    }
  }
}

async function readSortedEntries(directory: string): Promise<TreeEntry[]> {
  let dirents;
  try {
    dirents = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (isErrorCode(error, "ENOENT") || isErrorCode(error, "ENOTDIR")) return [];
    throw error;
  }
  const entries: TreeEntry[] = [];
  for (const dirent of dirents) {
    if (dirent.isDirectory() && dirent.name.endsWith(DIRECTORY_SUFFIX)) {
      entries.push({
        name: dirent.name,
        isDirectory: true,
        sortName: `${dirent.name.slice(0, -DIRECTORY_SUFFIX.length)}/`,
      });
    } else if (dirent.isFile() && dirent.name.endsWith(OBJECT_SUFFIX)) {
      entries.push({
        name: dirent.name,
        isDirectory: false,
        sortName: dirent.name.slice(0, -OBJECT_SUFFIX.length),
      });
    }
  }
  return entries.sort((left, right) => compareBlobKeys(left.sortName, right.sortName));
}

/** True when `error` is a Node system error with the given code. */
export function isErrorCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
