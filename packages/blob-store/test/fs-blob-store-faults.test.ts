/**
 * A filesystem store that turns read-only or full under a running host: each names the real cause with
 * its own code. Real mounts (a read-only bind mount, a tiny tmpfs) where the test may mount; otherwise
 * a directory without write permission for the EACCES case.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { createFsBlobStore } from "../src/fs/index.js";

const isRoot = process.getuid?.() === 0;
const canMount =
  isRoot &&
  (() => {
    try {
      execFileSync("mount", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();

const mounted: string[] = [];
afterEach(() => {
  for (const path of mounted.splice(0)) execFileSync("umount", ["-l", path]);
});

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error;
}

describe("filesystem store faults", () => {
  it.skipIf(!canMount)(
    "a read-only filesystem is storage_unwritable naming EROFS, for a new directory and an existing one",
    async () => {
      const source = await mkdtemp(join(tmpdir(), "oma-fs-ro-src-"));
      const target = await mkdtemp(join(tmpdir(), "oma-fs-ro-"));
      await mkdir(join(source, "existing"));
      execFileSync("mount", ["--bind", source, target]);
      mounted.push(target);
      execFileSync("mount", ["-o", "remount,bind,ro", target]);
      const store = createFsBlobStore({ rootDir: target });
      for (const key of ["fresh/dir/object", "existing/object"]) {
        const error = await failure(store.put(key, new Uint8Array([1, 2, 3])));
        expect(error.code).toBe("storage_unwritable");
        expect(error.message).toContain("read-only file system (EROFS)");
        expect(error.message).not.toContain("ENOENT");
        expect(error.context).toMatchObject({
          store: "filesystem",
          operation: "put",
          errno: "EROFS",
        });
        expect(error.cause).toBeInstanceOf(Error);
      }
      await rm(source, { recursive: true, force: true });
    },
  );

  it.skipIf(!canMount)("a full filesystem is insufficient_capacity naming ENOSPC", async () => {
    const target = await mkdtemp(join(tmpdir(), "oma-fs-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", target]);
    mounted.push(target);
    const store = createFsBlobStore({ rootDir: target });
    const error = await failure(store.put("big/object", new Uint8Array(256 * 1024)));
    expect(error.code).toBe("insufficient_capacity");
    expect(error.message).toContain("no space left on device (ENOSPC)");
    expect(error.context).toMatchObject({ errno: "ENOSPC" });
  });

  it.skipIf(isRoot)(
    "a directory without write permission is storage_unwritable naming EACCES",
    async () => {
      const root = await mkdtemp(join(tmpdir(), "oma-fs-acl-"));
      await chmod(root, 0o555);
      try {
        const error = await failure(
          createFsBlobStore({ rootDir: root }).put("a/b", new Uint8Array([1])),
        );
        expect(error.code).toBe("storage_unwritable");
        expect(error.message).toContain("(EACCES)");
      } finally {
        await chmod(root, 0o755);
        await rm(root, { recursive: true, force: true });
      }
    },
  );
});
