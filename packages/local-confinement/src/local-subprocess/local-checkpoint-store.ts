import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { cp, lstat, mkdir, readdir, readlink, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ArchiveRejectedError,
  IntegrityError,
  NotFoundError,
} from "@open-managed-agents/runtime-resource-contract";

/** Content-addressed copies of workspace directories, kept under one host directory. */
export interface LocalCheckpointStore {
  /** Copies `sourceDir` into the store and returns its id `sha256:<hex>`. */
  save(sourceDir: string): Promise<string>;
  /** Replaces the contents of `targetDir` with the checkpoint. Throws `not_found` or `integrity_failed`. */
  restoreInto(checkpointId: string, targetDir: string): Promise<void>;
}

const CHECKPOINT_ID = /^sha256:([0-9a-f]{64})$/;

/** Creates a checkpoint store rooted at `storeDir`. */
export function createLocalCheckpointStore(storeDir: string): LocalCheckpointStore {
  return {
    async save(sourceDir) {
      await mkdir(storeDir, { recursive: true });
      // Hashing the copy, not the source, makes the id describe exactly what was stored.
      const stagingDir = join(
        storeDir,
        `.staging-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}`,
      );
      try {
        await cp(sourceDir, stagingDir, { recursive: true, verbatimSymlinks: true });
        const hex = await hashDirectory(stagingDir);
        try {
          await rename(stagingDir, join(storeDir, hex));
        } catch (error) {
          if (!isCode(error, "ENOTEMPTY") && !isCode(error, "EEXIST")) throw error;
        }
        return `sha256:${hex}`;
      } finally {
        await rm(stagingDir, { recursive: true, force: true });
      }
    },
    async restoreInto(checkpointId, targetDir) {
      const hex = CHECKPOINT_ID.exec(checkpointId)?.[1];
      if (hex === undefined) {
        throw new NotFoundError({
          message: `no local checkpoint ${checkpointId}: not a sha256 content id`,
          context: { checkpointId },
        });
      }
      const checkpointDir = join(storeDir, hex);
      if (!(await stat(checkpointDir).catch(() => null))?.isDirectory()) {
        throw new NotFoundError({
          message: `no local checkpoint ${checkpointId} in this store`,
          context: { checkpointId },
        });
      }
      const actual = await hashDirectory(checkpointDir);
      if (actual !== hex) {
        throw new IntegrityError({
          message: `local checkpoint ${checkpointId} was modified after it was saved`,
          context: { checkpointId, actual: `sha256:${actual}` },
        });
      }
      await rm(targetDir, { recursive: true, force: true });
      await cp(checkpointDir, targetDir, { recursive: true, verbatimSymlinks: true });
    },
  };
}

/**
 * SHA-256 of a deterministic listing of a directory tree: one line per entry in byte order of its
 * relative path, giving type, path, executable bit, size and content hash (files) or link target.
 * File contents are streamed, never held whole in memory.
 */
export async function hashDirectory(root: string): Promise<string> {
  const listing = createHash("sha256");
  for (const relativePath of await listTree(root, "")) {
    const absolute = join(root, relativePath);
    const info = await lstat(absolute);
    if (info.isDirectory()) listing.update(`dir\0${relativePath}\n`);
    else if (info.isSymbolicLink())
      listing.update(`symlink\0${relativePath}\0${await readlink(absolute)}\n`);
    else if (info.isFile()) {
      const executable = (info.mode & 0o111) !== 0 ? "x" : "-";
      listing.update(
        `file\0${relativePath}\0${executable}\0${info.size}\0${await hashFile(absolute)}\n`,
      );
    } else {
      throw new ArchiveRejectedError({
        message: `workspace entry ${relativePath} is neither a file, a directory nor a symlink`,
        context: { path: relativePath },
      });
    }
  }
  return listing.digest("hex");
}

async function listTree(root: string, prefix: string): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  const paths: string[] = [];
  for (const entry of entries) {
    const relativePath = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    paths.push(relativePath);
    if (entry.isDirectory()) paths.push(...(await listTree(root, relativePath)));
  }
  return paths.sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));
}

function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
