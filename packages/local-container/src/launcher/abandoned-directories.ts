import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTAINER_ID_PATTERN } from "../server/container-registry.js";
import {
  OWNER_FILE,
  isOwnerAlive,
  ownerRecord,
  parseOwner,
  removeOrphanedContainers,
  writeOwner,
} from "../server/orphaned-containers.js";

/** Prefixes of the temporary directories the launcher makes (container trees, Durable Object state). */
export const TEMPORARY_PREFIXES = ["oma-local-containers-", "oma-local-bridge-state-"] as const;

/** Makes a temporary directory that names this process as its owner, so a later launcher can tell it abandoned. */
export async function makeOwnedTemporaryDirectory(
  prefix: (typeof TEMPORARY_PREFIXES)[number],
): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), prefix));
  await writeOwner(directory, ownerRecord(randomBytes(6).toString("hex")));
  return directory;
}

/**
 * Removes the launcher's temporary directories whose process is gone (killed before it could remove
 * them): first the container trees inside, with what their commands left running, then the directory.
 * Directories of live processes, and any without an owner record, are left alone.
 */
export async function removeAbandonedTemporaryDirectories(
  parent: string = tmpdir(),
): Promise<number> {
  const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
  let removed = 0;
  for (const entry of entries) {
    if (!entry.isDirectory() || !TEMPORARY_PREFIXES.some((prefix) => entry.name.startsWith(prefix)))
      continue;
    const directory = join(parent, entry.name);
    const owner = parseOwner(await readFile(join(directory, OWNER_FILE), "utf8").catch(() => ""));
    if (owner === null || isOwnerAlive(owner)) continue;
    await removeOrphanedContainers(directory, (name) => CONTAINER_ID_PATTERN.test(name));
    await rm(directory, { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
