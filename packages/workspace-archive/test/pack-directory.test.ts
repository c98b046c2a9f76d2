import { createHash } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { inspectArchive, packDirectory, type ArchiveEntryInfo } from "../src/index.js";
import { tool } from "./support/gnu-tar.js";
import { tempDir } from "./support/temp-dir.js";

async function names(archive: Buffer): Promise<string[]> {
  const seen: string[] = [];
  await inspectArchive(archive, { onEntry: (entry: ArchiveEntryInfo) => seen.push(entry.name) });
  return seen;
}

describe("packDirectory", () => {
  it("is deterministic and its digest matches the emitted bytes", async () => {
    const root = await tempDir("pack-determinism");
    for (const name of ["b", "a", "c", "B"]) await writeFile(join(root, name), name.repeat(1000));
    await mkdir(join(root, "z"));
    await writeFile(join(root, "z", "big"), Buffer.alloc(12 * 1024 * 1024, 7));
    const first = packDirectory(root);
    const bytes = await buffer(first.stream);
    const digest = await first.digest;
    expect(digest.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(digest).toMatchObject({
      bytes: bytes.length,
      entries: 7,
      files: 5,
      directories: 2,
      symlinks: 0,
      fileBytes: 4000 + 12 * 1024 * 1024,
      changed: [],
    });
    const second = packDirectory(root);
    await buffer(second.stream);
    expect((await second.digest).sha256).toBe(digest.sha256);
    expect(await names(bytes)).toEqual(["./", "./B", "./a", "./b", "./c", "./z/", "./z/big"]);
  });

  it("applies exclude globs at any depth, anchored, directory-only and with **", async () => {
    const root = await tempDir("pack-excludes");
    const files = [
      "keep.txt",
      "app.log",
      "src/app.log",
      "src/node_modules/x.js",
      "node_modules/y.js",
      "build/out.js",
      "src/build/out.js",
      "cache/f",
      "deep/a/cache/g",
      "tmp",
    ];
    for (const path of files) {
      await mkdir(join(root, path, ".."), { recursive: true });
      await writeFile(join(root, path), path);
    }
    await mkdir(join(root, "logs"));
    const packed = packDirectory(root, {
      excludes: ["node_modules", "*.log", "/build", "cache/", "tmp/", "**/a/**"],
    });
    const listed = await names(await buffer(packed.stream));
    expect(listed).toEqual([
      "./",
      "./deep/",
      "./deep/a/",
      "./keep.txt",
      "./logs/",
      "./src/",
      "./src/build/",
      "./src/build/out.js",
      "./tmp",
    ]);
  });

  it("keeps symlinks as links, skips FIFOs and reports them", async () => {
    const root = await tempDir("pack-special");
    await writeFile(join(root, "target.txt"), "t");
    await symlink("target.txt", join(root, "link"));
    await symlink("/does/not/exist", join(root, "dangling"));
    await tool("mkfifo", [join(root, "pipe")]);
    const packed = packDirectory(root);
    const archive = await buffer(packed.stream);
    const entries: ArchiveEntryInfo[] = [];
    await inspectArchive(archive, {
      allowSymlinksOutsideRoot: true,
      onEntry: (entry) => entries.push(entry),
    });
    expect(
      entries
        .filter((entry) => entry.kind === "symlink")
        .map((entry) => [entry.name, entry.linkTarget]),
    ).toEqual([
      ["./dangling", "/does/not/exist"],
      ["./link", "target.txt"],
    ]);
    expect((await packed.digest).skipped).toEqual(["./pipe"]);
  });

  it("offers the same bytes as a web stream and as gzip", async () => {
    const root = await tempDir("pack-web");
    await writeFile(join(root, "a.txt"), "a".repeat(10_000));
    const plain = await buffer(packDirectory(root).stream);
    const web = await buffer(Readable.fromWeb(packDirectory(root).toWebStream() as never));
    expect(web.equals(plain)).toBe(true);
    const gzipped = packDirectory(root, { gzip: { level: 6 } });
    const compressed = await buffer(gzipped.stream);
    expect([...compressed.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(compressed.length).toBeLessThan(plain.length);
    expect((await gzipped.digest).bytes).toBe(compressed.length);
    expect(await names(compressed)).toEqual(["./", "./a.txt"]);
    await expect(inspectArchive(compressed, { gzip: false })).rejects.toMatchObject({
      code: "archive_rejected",
    });
  });

  it("fails with typed errors: bad options at once, a missing folder through the stream and digest", async () => {
    expect(() => packDirectory("/tmp", { excludes: [""] })).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ path: "excludes.0" }),
      }),
    );
    expect(() => packDirectory("/tmp", { gzip: { level: 12 } })).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ path: "gzip.level" }),
      }),
    );
    const missing = packDirectory(join(await tempDir("pack-missing"), "nope"));
    await expect(buffer(missing.stream)).rejects.toMatchObject({ code: "not_found" });
    await expect(missing.digest).rejects.toMatchObject({ code: "not_found" });
  });

  it("settles the digest when the consumer stops reading early", async () => {
    const root = await tempDir("pack-abort");
    await writeFile(join(root, "big"), Buffer.alloc(8 * 1024 * 1024));
    for (let index = 0; index < 50; index += 1) await writeFile(join(root, `f${index}`), "x");
    const packed = packDirectory(root);
    for await (const chunk of packed.stream) {
      expect(chunk).toBeInstanceOf(Buffer);
      break;
    }
    await expect(packed.digest).rejects.toBeDefined();
  });

  it("fills a BYOB reader's own buffer with the same bytes, and opens only once", async () => {
    const root = await tempDir("pack-byob");
    await writeFile(join(root, "big.bin"), Buffer.alloc(3 * 1024 * 1024 + 5, 9));
    for (let index = 0; index < 20; index += 1)
      await writeFile(join(root, `s${index}`), `small ${index}`);
    const expected = await buffer(packDirectory(root).stream);
    const packed = packDirectory(root);
    const reader = packed.toWebStream().getReader({ mode: "byob" });
    const copies: Buffer[] = [];
    let view = new Uint8Array(64 * 1024);
    for (;;) {
      const { value, done } = await reader.read(view);
      if (done) break;
      copies.push(Buffer.from(value));
      view = new Uint8Array(value.buffer);
    }
    expect(Buffer.concat(copies).equals(expected)).toBe(true);
    expect((await packed.digest).sha256).toBe(createHash("sha256").update(expected).digest("hex"));
    expect(() => packed.toWebStream()).toThrowError(
      expect.objectContaining({ code: "invalid_request" }),
    );
    expect(() => packed.stream).toThrowError(expect.objectContaining({ code: "invalid_request" }));
  });
});
