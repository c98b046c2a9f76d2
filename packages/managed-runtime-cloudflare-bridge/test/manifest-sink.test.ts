import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ManifestEntry, PackRef } from "../src/checkpoint/manifest.js";
import { decodeManifestLines, encodeManifestLines } from "../src/checkpoint/manifest-lines.js";
import { type ManifestSink, createManifestSink } from "../src/checkpoint/manifest-sink.js";
import type { WrittenManifest } from "../src/checkpoint/manifest-writer.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

async function sink(): Promise<ManifestSink> {
  directory = await mkdtemp(join(tmpdir(), "oma-manifest-sink-"));
  return createManifestSink({ maxBytes: 1 << 30, directory });
}

async function bytesOf(written: WrittenManifest): Promise<Buffer> {
  const bytes = Buffer.from(await new Response(written.spool.read()).arrayBuffer());
  await written.spool.dispose();
  return bytes;
}

async function* listed<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

const pack = (name: string): PackRef => ({
  sha256: createHash("sha256").update(name).digest("hex"),
  size: 1 << 20,
});
const sha = (name: string) => createHash("sha256").update(`content ${name}`).digest("hex");
const file = (path: string) => ({
  type: "file" as const,
  path,
  mode: 0o644,
  mtime: 1_700_000_000,
  size: 100,
  sha256: sha(path),
});

describe("manifest sink", () => {
  it("writes the bytes the manifest encoder writes for the same entries, whenever each pack is sealed", async () => {
    const stored = pack("stored earlier");
    const own = [pack("own 0"), pack("own 1"), pack("own 2")];
    const target = await sink();
    // What the sink is given, and (with every location known) what the encoder is given.
    const expected: ManifestEntry[] = [];
    const packed = (path: string, sequence: number, offset: number) => {
      target.addPacked(file(path), sequence, offset);
      expected.push({ ...file(path), location: { pack: own[sequence] as PackRef, offset } });
    };
    const added = (entry: ManifestEntry) => {
      target.add(entry);
      expected.push(entry);
    };
    added({ type: "directory", path: "a", mode: 0o755, mtime: 1 });
    packed("a/f0", 0, 0);
    packed("a/f1", 0, 100);
    added({ ...file("a/f2"), location: { pack: stored, offset: 7 } });
    added({ ...file("a/f3"), size: 0 });
    added({ type: "symlink", path: "a/link", mode: 0o777, mtime: 2, target: "f0" });
    target.sealed(0, own[0] as PackRef);
    // Contents met again in a sealed pack (enough lines for a write of their own), then the next pack, used
    // before and after a stored one, and a third pack sealed before the second.
    for (let index = 0; index < 1000; index += 1)
      packed(`b/e${String(index).padStart(5, "0")}`, 0, 100);
    packed("b/f0", 0, 100);
    packed("b/f1", 1, 0);
    added({ ...file("b/f2"), location: { pack: stored, offset: 9 } });
    packed("b/f3", 1, 100);
    packed("b/f4", 2, 0);
    target.sealed(2, own[2] as PackRef);
    // What may go before the second pack's declaration goes; the rest waits for it.
    await target.flushed();
    expect(target.waitingBytes).toBeGreaterThan(0);
    target.sealed(1, own[1] as PackRef);
    await target.flushed();
    const got = await bytesOf(await target.finish());

    const chunks: Buffer[] = [];
    for await (const chunk of encodeManifestLines(listed(expected))) chunks.push(chunk);
    expect(got.toString("utf8")).toBe(Buffer.concat(chunks).toString("utf8"));
    const decoded: ManifestEntry[] = [];
    for await (const entry of decodeManifestLines(listed([got]))) decoded.push(entry);
    expect(decoded).toEqual(expected);
  });

  it("holds every line from a pack's first use until the pack is sealed, then writes them in order", async () => {
    const target = await sink();
    target.add({ type: "directory", path: "a", mode: 0o755, mtime: 1 });
    expect(target.waitingBytes).toBe(0);
    target.addPacked(file("a/f0"), 0, 0);
    const waiting = target.waitingBytes;
    expect(waiting).toBeGreaterThan(0);
    target.add({ type: "directory", path: "b", mode: 0o755, mtime: 1 });
    expect(target.waitingBytes).toBeGreaterThan(waiting);
    await target.flushed();
    target.sealed(0, pack("own 0"));
    expect(target.waitingBytes).toBe(0);
    const lines = (await bytesOf(await target.finish())).toString("utf8").trimEnd().split("\n");
    expect(
      lines.map(
        (line) =>
          (JSON.parse(line) as { type?: string; path?: string }).path ??
          (JSON.parse(line) as { type?: string }).type,
      ),
    ).toEqual([undefined, "a", "pack", "a/f0", "b"]);
  });

  it("writes many lines through a buffer that grows while a pack stays open", async () => {
    const target = await sink();
    const paths = Array.from(
      { length: 20_000 },
      (_, index) => `deep/${"x".repeat(40)}/f${String(index).padStart(6, "0")}`,
    );
    for (const [index, path] of paths.entries()) target.addPacked(file(path), 0, index * 10);
    // More than the buffer's first size waits for the pack, then goes.
    expect(target.waitingBytes).toBeGreaterThan(1024 * 1024);
    target.sealed(0, pack("big"));
    const decoded: ManifestEntry[] = [];
    for await (const entry of decodeManifestLines(listed([await bytesOf(await target.finish())])))
      decoded.push(entry);
    expect(decoded.map((entry) => entry.path)).toEqual(paths);
  });

  it("refuses an entry out of order and a finish while a pack is still open", async () => {
    const first = await sink();
    first.add({ type: "directory", path: "b", mode: 0o755, mtime: 1 });
    expect(() => first.add({ type: "directory", path: "a", mode: 0o755, mtime: 1 })).toThrow(
      expect.objectContaining({ code: "sandbox_failed" }),
    );
    await first.dispose();

    const second = await sink();
    second.addPacked(file("a"), 0, 0);
    await expect(second.finish()).rejects.toMatchObject({
      code: "sandbox_failed",
      message: expect.stringMatching(/never sealed/),
    });
    await second.dispose();
    // A pack sealed without a use is the caller's mistake, not a silent gap.
    const third = await sink();
    expect(() => third.sealed(4, pack("unused"))).toThrow(
      expect.objectContaining({ code: "sandbox_failed" }),
    );
    await third.dispose();
  });
});
