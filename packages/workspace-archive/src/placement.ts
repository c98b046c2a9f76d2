import { randomBytes } from "node:crypto";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rename,
  rmdir,
  stat,
  unlink,
  utimes,
} from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { removeTree } from "./remove-tree.js";
import { previousName, removeStaleStaging, stagingPrefix } from "./stale-staging.js";
import type { DirectoryMetadata } from "./staging-writer.js";

/** Where an extraction stages its entries and where they end up. */
export interface Placement {
  /** Absolute, symlink-free path of the destination folder. */
  readonly destination: string;
  /** Absolute path of the private staging folder. */
  readonly staging: string;
  /** True when the staging folder sits inside the destination (the destination is a mount point). */
  readonly inside: boolean;
  /** Mode of the destination before extraction, or null when it did not exist. */
  readonly previousMode: number | null;
}

/**
 * Creates the staging folder on the destination's filesystem: next to the destination, or inside it when
 * the destination is a mount point (a rename across filesystems would fail).
 */
export async function prepareStaging(dir: string): Promise<Placement> {
  if (typeof dir !== "string" || dir.length === 0)
    throw new InvalidRequestError({ message: "destination folder must be a non-empty path" });
  const requested = resolve(dir);
  const destination = await realpath(requested).catch(() => requested);
  const parent = dirname(destination);
  const base = basename(destination) || "root";
  // Staging is named after this process, so a later run finds what a killed one left and removes it
  // (first, so that a parked previous tree is back in place before the destination is looked at).
  await removeStaleStaging(parent, base, destination);
  const existing = await stat(destination).catch(() => null);
  if (existing !== null && !existing.isDirectory()) {
    throw new InvalidRequestError({
      message: "destination exists and is not a folder",
      context: { destination },
    });
  }
  await mkdir(parent, { recursive: true });
  const inside =
    existing !== null && destination !== parent && existing.dev !== (await stat(parent)).dev;
  if (inside) await removeStaleStaging(destination, base, destination);
  const staging = await mkdtemp(join(inside ? destination : parent, stagingPrefix(base)));
  return {
    destination,
    staging,
    inside,
    previousMode: existing === null ? null : existing.mode & 0o7777,
  };
}

/** Replace mode: the destination becomes exactly the archive's tree. */
export async function commitReplace(placement: Placement): Promise<void> {
  const { destination, staging } = placement;
  if (placement.inside) {
    const keep = basename(staging);
    for (const name of await readdir(destination))
      if (name !== keep) await removeTree(join(destination, name));
    for (const name of await readdir(staging))
      await rename(join(staging, name), join(destination, name));
    await rmdir(staging);
    return;
  }
  if ((await lstat(destination).catch(() => null)) === null) {
    await rename(staging, destination);
    return;
  }
  const previous = join(
    dirname(destination),
    previousName(basename(destination), randomBytes(6).toString("hex")),
  );
  await rename(destination, previous);
  try {
    await rename(staging, destination);
  } catch (error) {
    await rename(previous, destination);
    throw error;
  }
  await removeTree(previous);
}

/**
 * Merge mode: every archive entry replaces what is at its path (a directory over a directory merges),
 * and everything else in the destination stays. Existing symlinks are replaced, never followed.
 */
export async function commitMerge(placement: Placement): Promise<void> {
  await mkdir(placement.destination, { recursive: true });
  await mergeInto(
    placement.staging,
    placement.destination,
    placement.inside ? basename(placement.staging) : null,
  );
  await removeTree(placement.staging);
}

async function mergeInto(source: string, target: string, skip: string | null): Promise<void> {
  for (const entry of await readdir(source, { withFileTypes: true })) {
    if (entry.name === skip) continue;
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    const existing = await lstat(to).catch(() => null);
    if (entry.isDirectory() && existing?.isDirectory()) {
      await mergeInto(from, to, null);
      continue;
    }
    if (existing?.isDirectory()) await removeTree(to);
    else if (existing !== null && entry.isDirectory()) await unlink(to);
    await rename(from, to);
  }
}

/**
 * Applies directory modes and times once every entry is in place (renames change a folder's mtime).
 * When the archive has no root entry, a new destination gets 0755 and an existing one keeps its mode.
 */
export async function applyDirectoryMetadata(
  placement: Placement,
  directories: ReadonlyMap<string, DirectoryMetadata>,
): Promise<void> {
  const paths = [...directories.keys()].sort((left, right) => depth(right) - depth(left));
  for (const path of paths) {
    const target = join(placement.destination, path);
    const metadata = directories.get(path) as DirectoryMetadata;
    const stats = await lstat(target).catch(() => null);
    if (!stats?.isDirectory()) continue;
    await chmod(target, metadata.mode);
    await utimes(target, metadata.mtime, metadata.mtime);
  }
  if (!directories.has("")) await chmod(placement.destination, placement.previousMode ?? 0o755);
}

function depth(path: string): number {
  return path === "" ? 0 : path.split("/").length;
}
