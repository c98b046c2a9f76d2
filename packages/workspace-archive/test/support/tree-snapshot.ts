import { createHash } from "node:crypto";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";

/** What a test compares about one path of a tree. */
export interface NodeSnapshot {
  readonly type: "directory" | "file" | "symlink" | "other";
  readonly mode: number;
  readonly size?: number;
  readonly sha256?: string;
  readonly target?: string;
  readonly mtime?: number;
}

/**
 * Describes every path below `root` (the root itself as "."): type, permission bits, file size and
 * sha256, symlink target, and mtime in whole seconds for files (and directories when asked).
 */
export async function snapshotTree(
  root: string,
  options: { directoryTimes?: boolean } = {},
): Promise<Record<string, NodeSnapshot>> {
  const result: Record<string, NodeSnapshot> = {};
  const visit = async (absolute: string, path: string): Promise<void> => {
    const stats = await lstat(absolute);
    const mode = stats.mode & 0o7777;
    const mtime = Math.floor(stats.mtimeMs / 1000);
    if (stats.isDirectory()) {
      result[path] = { type: "directory", mode, ...(options.directoryTimes ? { mtime } : {}) };
      for (const name of (await readdir(absolute)).sort())
        await visit(join(absolute, name), path === "." ? name : `${path}/${name}`);
    } else if (stats.isSymbolicLink()) {
      result[path] = { type: "symlink", mode: 0, target: await readlink(absolute) };
    } else if (stats.isFile()) {
      const sha256 = createHash("sha256")
        .update(await readFile(absolute))
        .digest("hex");
      result[path] = { type: "file", mode, size: stats.size, sha256, mtime };
    } else result[path] = { type: "other", mode };
  };
  await visit(root, ".");
  return result;
}
