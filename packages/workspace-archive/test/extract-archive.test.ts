import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { extractArchive, packDirectory } from "../src/index.js";
import { craftArchive } from "./support/crafted-archive.js";
import { tempDir } from "./support/temp-dir.js";
import { snapshotTree } from "./support/tree-snapshot.js";

describe("extractArchive", () => {
  it("replace mode leaves exactly the archive's tree; merge mode keeps other files", async () => {
    const base = await tempDir("modes");
    const archive = await craftArchive([
      { name: "./", type: "directory", mode: 0o750 },
      { name: "./new.txt", body: "new" },
      { name: "./shared.txt", body: "from archive" },
    ]);
    for (const mode of ["replace", "merge"] as const) {
      const target = join(base, mode);
      await mkdir(target);
      await writeFile(join(target, "old.txt"), "old");
      await writeFile(join(target, "shared.txt"), "before");
      const result = await extractArchive(archive, target, { mode });
      expect(result).toMatchObject({
        entries: 3,
        files: 2,
        directories: 1,
        bytes: 15,
        gzip: false,
        sha256: null,
      });
      const tree = await snapshotTree(target);
      expect(Object.keys(tree).sort()).toEqual(
        mode === "replace"
          ? [".", "new.txt", "shared.txt"]
          : [".", "new.txt", "old.txt", "shared.txt"],
      );
      expect(await readFile(join(target, "shared.txt"), "utf8")).toBe("from archive");
      expect((await stat(target)).mode & 0o777).toBe(0o750);
    }
  });

  it("merge replaces a symlink in the destination instead of writing through it", async () => {
    const base = await tempDir("merge-symlink");
    const target = join(base, "ws");
    const elsewhere = join(base, "elsewhere");
    await mkdir(target);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(target, "dir"));
    await extractArchive(await craftArchive([{ name: "dir/file", body: "x" }]), target, {
      mode: "merge",
    });
    expect((await snapshotTree(target)).dir).toEqual({
      type: "directory",
      mode: expect.any(Number),
    });
    expect(Object.keys(await snapshotTree(elsewhere))).toEqual(["."]);
  });

  it("checks expectedSha256 before anything is moved into place", async () => {
    const target = join(await tempDir("sha"), "ws");
    await mkdir(target);
    await writeFile(join(target, "keep.txt"), "keep");
    const archive = await craftArchive([{ name: "a.txt", body: "a" }]);
    const sha256 = createHash("sha256").update(archive).digest("hex");
    await expect(
      extractArchive(archive, target, { expectedSha256: "0".repeat(64) }),
    ).rejects.toMatchObject({ code: "integrity_failed", context: { actual: sha256 } });
    expect(Object.keys(await snapshotTree(target))).toEqual([".", "keep.txt"]);
    expect((await extractArchive(archive, target, { expectedSha256: sha256 })).sha256).toBe(sha256);
    expect(Object.keys(await snapshotTree(target))).toEqual([".", "a.txt"]);
  });

  it("extracts hardlinks as hardlinks and lets later duplicates win", async () => {
    const target = join(await tempDir("links"), "ws");
    const archive = await craftArchive([
      { name: "a", body: "first" },
      { name: "a", body: "second" },
      { name: "h", type: "link", linkname: "./a" },
      { name: "s", type: "symlink", linkname: "a" },
      { name: "s", body: "now a file" },
    ]);
    await extractArchive(archive, target);
    expect(await readFile(join(target, "h"), "utf8")).toBe("second");
    expect((await stat(join(target, "h"))).ino).toBe((await stat(join(target, "a"))).ino);
    expect((await snapshotTree(target)).s).toMatchObject({ type: "file", size: 10 });
    await expect(
      extractArchive(
        await craftArchive([
          { name: "d/", type: "directory" },
          { name: "d", body: "x" },
        ]),
        target,
      ),
    ).rejects.toMatchObject({
      code: "archive_rejected",
      context: { entry: "d", reason: "entry_conflict" },
    });
    await expect(
      extractArchive(
        await craftArchive([{ name: "h", type: "link", linkname: "missing" }]),
        target,
      ),
    ).rejects.toMatchObject({
      code: "archive_rejected",
      context: { entry: "h", reason: "hardlink_target_missing" },
    });
    expect(await readFile(join(target, "h"), "utf8")).toBe("second");
  });

  it("reads web streams and async iterables, and refuses a destination that is a file", async () => {
    const base = await tempDir("sources");
    const archive = await craftArchive([{ name: "a.txt", body: "abc" }]);
    const web = Readable.toWeb(Readable.from([archive]));
    expect((await extractArchive(web as never, join(base, "web"))).files).toBe(1);
    async function* pieces() {
      for (let offset = 0; offset < archive.length; offset += 700)
        yield new Uint8Array(archive.subarray(offset, offset + 700));
    }
    expect((await extractArchive(pieces(), join(base, "iterable"))).files).toBe(1);
    await writeFile(join(base, "file"), "x");
    await expect(extractArchive(archive, join(base, "file"))).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(
      extractArchive(archive, join(base, "x"), { limits: { maxEntries: 0 } }),
    ).rejects.toMatchObject({
      code: "invalid_config",
      context: { path: "limits.maxEntries" },
    });
    await expect(
      extractArchive(archive, join(base, "x"), { mode: "append" as never }),
    ).rejects.toMatchObject({ code: "invalid_config", context: { path: "mode" } });
  });

  it("reads {file} sources with reused buffers and still restores every byte", async () => {
    const base = await tempDir("file-source");
    const source = join(base, "source");
    await mkdir(join(source, "many"), { recursive: true });
    // Larger than the eight-buffer ring, with small files between, so buffers are reused while writes are in flight.
    for (let index = 0; index < 4; index += 1)
      await writeFile(join(source, `big-${index}.bin`), randomBytes(5 * 1024 * 1024 + index * 777));
    for (let index = 0; index < 300; index += 1)
      await writeFile(join(source, "many", `f${index}`), randomBytes(index * 37));
    const archiveFile = join(base, "archive.tar");
    await pipeline(packDirectory(source).stream, createWriteStream(archiveFile));
    const target = join(base, "target");
    const result = await extractArchive({ file: archiveFile }, target);
    expect(result.files).toBe(304);
    expect(await snapshotTree(target)).toEqual(await snapshotTree(source));
    const gzipFile = join(base, "archive.tar.gz");
    await pipeline(packDirectory(source, { gzip: true }).stream, createWriteStream(gzipFile));
    expect((await extractArchive({ file: gzipFile }, join(base, "gz"))).gzip).toBe(true);
    expect(await snapshotTree(join(base, "gz"))).toEqual(await snapshotTree(source));
    await expect(
      extractArchive({ file: join(base, "missing.tar") }, join(base, "x")),
    ).rejects.toMatchObject({ code: "not_found" });
  });
});
