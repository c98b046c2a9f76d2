import { chmod, lstat, readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/**
 * Removes a tree like `rm -rf`. Directories without write permission (restored from an archive with
 * mode 0555, for example) are made writable and the removal is retried.
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw error;
    await makeWritable(path);
    await rm(path, { recursive: true, force: true });
  }
}

async function makeWritable(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => null);
  if (!stats?.isDirectory()) return;
  await chmod(path, 0o700);
  for (const name of await readdir(path)) await makeWritable(join(path, name));
}
