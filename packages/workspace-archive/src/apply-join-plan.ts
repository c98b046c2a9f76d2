import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { link, lstat, mkdir, open, rename, rmdir, unlink, utimes } from "node:fs/promises";
import { join, resolve } from "node:path";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import { IO_CHUNK_BYTES } from "./io-sizes.js";
import { ancestorsOf, parentOf } from "./entry-name.js";
import { type JoinPlan, parseJoinPlan } from "./join-plan.js";
import { rejectEntry } from "./rejections.js";
import { removeTree } from "./remove-tree.js";

/**
 * Applies a join plan below `dir` (where the parts were extracted): streams the chunks into a temporary
 * file, checks size and sha256 (`integrity_failed` otherwise, target untouched), sets mode and mtime,
 * renames it over the target, recreates hardlinks and removes the chunk folder. No path is followed
 * through a symlink.
 */
export async function applyJoinPlan(dir: string, plan: JoinPlan): Promise<void> {
  const checked = parseJoinPlan(plan);
  const root = resolve(dir);
  const target = checked.target.slice(2);
  await ensureRealDirectory(root, parentOf(target), checked.target);
  const temporary = join(root, `${target}.oma-join`);
  await unlink(temporary).catch(() => undefined);
  const hash = createHash("sha256");
  let written = 0;
  const output = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    for (const chunk of checked.chunks) {
      const path = chunk.name.slice(2);
      await ensureRealDirectory(root, parentOf(path), chunk.name, false);
      const input = await open(join(root, path), constants.O_RDONLY | constants.O_NOFOLLOW).catch(
        (error: unknown) => {
          throw new IntegrityError({
            message: `join plan chunk ${JSON.stringify(chunk.name)} cannot be read`,
            context: { chunk: chunk.name },
            cause: error,
          });
        },
      );
      try {
        for await (const data of input.createReadStream({
          highWaterMark: IO_CHUNK_BYTES,
          autoClose: false,
        })) {
          hash.update(data as Buffer);
          written += (data as Buffer).length;
          await output.write(data as Buffer);
        }
      } finally {
        await input.close();
      }
    }
    const sha256 = hash.digest("hex");
    if (written !== checked.size || sha256 !== checked.sha256) {
      throw new IntegrityError({
        message: `joined file ${JSON.stringify(checked.target)} does not match its plan`,
        context: {
          target: checked.target,
          expectedBytes: checked.size,
          actualBytes: written,
          expectedSha256: checked.sha256,
          actualSha256: sha256,
        },
      });
    }
    await output.chmod(checked.mode);
  } catch (error) {
    await output.close();
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await output.close();
  await utimes(temporary, checked.mtime, checked.mtime);
  if ((await lstat(join(root, target)).catch(() => null))?.isDirectory()) {
    await unlink(temporary);
    throw rejectEntry(checked.target, "entry_conflict", "the join target is a directory");
  }
  await rename(temporary, join(root, target));
  for (const name of checked.links) {
    const path = name.slice(2);
    await ensureRealDirectory(root, parentOf(path), name);
    await unlink(join(root, path)).catch(() => undefined);
    await link(join(root, target), join(root, path));
  }
  await removeTree(join(root, checked.chunkDirectory.slice(2)));
  const chunkParent = parentOf(checked.chunkDirectory.slice(2));
  if (chunkParent !== "") await rmdir(join(root, chunkParent)).catch(() => undefined);
}

/** Makes sure every component of `path` below `root` is a real folder (created when `create`), never a symlink. */
async function ensureRealDirectory(
  root: string,
  path: string,
  entry: string,
  create = true,
): Promise<void> {
  if (path === "") return;
  for (const component of [...ancestorsOf(path), path]) {
    const absolute = join(root, component);
    const stats = await lstat(absolute).catch(() => null);
    if (stats === null) {
      if (!create)
        throw new IntegrityError({
          message: `join plan path ${JSON.stringify(entry)} is missing`,
          context: { entry },
        });
      await mkdir(absolute);
      continue;
    }
    if (!stats.isDirectory()) {
      throw rejectEntry(
        entry,
        "write_through_symlink",
        `${JSON.stringify(`./${component}`)} is not a real folder`,
      );
    }
  }
}
