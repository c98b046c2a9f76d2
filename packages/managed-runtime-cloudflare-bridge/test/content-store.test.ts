import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { afterEach, describe, expect, it } from "vitest";
import { blobKeyOf, packKeyOf } from "../src/checkpoint/blob-keys.js";
import { MAX_WAITING_LINE_BYTES, createContentStore } from "../src/checkpoint/content-store.js";
import { decodeManifestLines } from "../src/checkpoint/manifest-lines.js";
import { createManifestSink } from "../src/checkpoint/manifest-sink.js";
import type { ManifestEntry, ManifestFile } from "../src/checkpoint/manifest.js";
import { PACK_BYTES } from "../src/checkpoint/pack-writer.js";
import { NO_STORED_CONTENTS, type StoredContents } from "../src/checkpoint/stored-contents.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const file = (path: string, size: number) => ({
  type: "file" as const,
  path,
  mode: 0o644,
  mtime: 1_700_000_000,
  size,
});

/** A content store writing into a real manifest sink; `finish` ends both and answers the manifest's entries, read back. */
async function setup(stored: StoredContents = NO_STORED_CONTENTS) {
  directory = await mkdtemp(join(tmpdir(), "oma-content-store-"));
  const store = createMemoryBlobStore();
  const spool = { maxBytes: 1 << 30, directory };
  const sink = await createManifestSink(spool);
  const contents = createContentStore({ store, keyPrefix: "p", session: "s", stored, spool, sink });
  const finish = async (): Promise<ManifestEntry[]> => {
    await contents.finish();
    const written = await sink.finish();
    const entries: ManifestEntry[] = [];
    for await (const entry of decodeManifestLines(
      written.spool.read() as unknown as AsyncIterable<Uint8Array>,
    ))
      entries.push(entry);
    await written.spool.dispose();
    return entries;
  };
  return { store, contents, sink, finish };
}

const packsRead = new Map<string, Buffer>();

/** The bytes a written file's location or blob holds (each pack read and checked once). */
async function bytesOf(
  store: ReturnType<typeof createMemoryBlobStore>,
  entry: ManifestFile,
): Promise<Buffer> {
  if (!entry.location)
    return Buffer.from(
      await new Response(
        (await store.get(blobKeyOf("p", "s", entry.sha256)))?.stream(),
      ).arrayBuffer(),
    );
  let pack = packsRead.get(entry.location.pack.sha256);
  if (!pack) {
    pack = Buffer.from(
      await new Response(
        (await store.get(packKeyOf("p", "s", entry.location.pack.sha256)))?.stream(),
      ).arrayBuffer(),
    );
    expect(sha(pack)).toBe(entry.location.pack.sha256);
    packsRead.set(entry.location.pack.sha256, pack);
  }
  return pack.subarray(entry.location.offset, entry.location.offset + entry.size);
}

describe("content store", () => {
  it("hands entries on in the order given, each file once its pack is sealed, and every content where its entry says", async () => {
    const { store, contents, sink, finish } = await setup();
    const bodies = new Map<string, Buffer>();
    // Enough small contents for several packs, a folder and a symlink between them, a large one, and empty ones.
    const order: string[] = [];
    for (let index = 0; index < 1200; index += 1) {
      const path = `f${String(index).padStart(5, "0")}`;
      if (index === 300) {
        contents.place({ type: "directory", path: `${path}-dir`, mode: 0o755, mtime: 1 });
        order.push(`${path}-dir`);
        // The folder's line waits behind the files of the open pack.
        expect(sink.waitingBytes).toBeGreaterThan(0);
      }
      if (index === 700) {
        const big = randomBytes(600_000);
        bodies.set(`${path}-big`, big);
        await contents.addLarge(
          file(`${path}-big`, big.byteLength),
          (async function* () {
            // Views of one reused buffer, as the archive reader hands them out.
            const buffer = Buffer.alloc(64 * 1024);
            for (let offset = 0; offset < big.byteLength; offset += buffer.byteLength) {
              const piece = big.subarray(offset, offset + buffer.byteLength);
              piece.copy(buffer);
              yield buffer.subarray(0, piece.byteLength);
            }
          })(),
        );
        order.push(`${path}-big`);
      }
      const body = index % 97 === 0 ? Buffer.alloc(0) : randomBytes(5000 + (index % 13));
      bodies.set(path, body);
      await contents.addSmall(file(path, body.byteLength), body);
      order.push(path);
      await sink.flushed();
    }
    const written = await finish();
    expect(written.map((entry) => entry.path)).toEqual(order);
    const packs = new Set<string>();
    for (const entry of written) {
      if (entry.type !== "file") continue;
      expect(entry.sha256).toBe(sha(bodies.get(entry.path) as Buffer));
      if (entry.size === 0) expect(entry.location).toBeUndefined();
      else
        expect((await bytesOf(store, entry)).equals(bodies.get(entry.path) as Buffer)).toBe(true);
      if (entry.location) packs.add(entry.location.pack.sha256);
    }
    expect(packs.size).toBeGreaterThanOrEqual(Math.floor((1200 * 5000) / PACK_BYTES));
  });

  it("stores a content once: a duplicate met again, or one the session holds, is referenced", async () => {
    const held = randomBytes(3000);
    const heldLocation = { pack: { sha256: "a".repeat(64), size: 10_000 }, offset: 40 };
    const { store, contents, finish } = await setup({
      size: 1,
      get: (digest) => (digest === sha(held) ? heldLocation : undefined),
    });
    const twice = randomBytes(4000);
    await contents.addSmall(file("a", twice.byteLength), twice);
    await contents.addSmall(file("b", held.byteLength), held);
    await contents.addSmall(file("c", twice.byteLength), Buffer.from(twice));
    const [a, b, c] = (await finish()) as ManifestFile[];
    expect(b?.location).toEqual(heldLocation);
    expect(c?.location).toEqual(a?.location);
    // One pack, holding `twice` once.
    const packs = (await store.list({ prefix: "p/" })).objects;
    expect(packs).toHaveLength(1);
    expect(packs[0]?.size).toBe(twice.byteLength);
  });

  it("bounds the manifest lines waiting for the open pack: it is sealed early, short of its usual size", async () => {
    const { store, contents, sink, finish } = await setup();
    const long = "p".repeat(150);
    let most = 0;
    // Tiny distinct contents: their lines outgrow the bound long before their bytes fill a pack.
    for (let index = 0; index < 30_000; index += 1) {
      await contents.addSmall(
        file(`a/${long}${String(index).padStart(6, "0")}`, 4),
        Buffer.from(index.toString(36).padStart(4, "0")),
      );
      most = Math.max(most, sink.waitingBytes);
      await sink.flushed();
    }
    // One small file, then a great many folders behind it.
    await contents.addSmall(file("b/first", 3), Buffer.from("one"));
    for (let index = 0; index < 30_000; index += 1) {
      await contents.place({
        type: "directory",
        path: `b/${long}${String(index).padStart(6, "0")}`,
        mode: 0o755,
        mtime: 1,
      });
      most = Math.max(most, sink.waitingBytes);
      await sink.flushed();
    }
    const written = await finish();
    expect(written).toHaveLength(60_001);
    expect(most).toBeLessThan(MAX_WAITING_LINE_BYTES + 1024);
    expect(most).toBeGreaterThan(MAX_WAITING_LINE_BYTES / 2);
    const packs = (await store.list({ prefix: "p/" })).objects;
    // 120,003 content bytes, far under one pack's size, in several packs.
    expect(packs.length).toBeGreaterThanOrEqual(3);
    for (const entry of written)
      if (entry.type === "file") expect((await bytesOf(store, entry)).byteLength).toBe(entry.size);
  });

  it("refuses a large content whose size is not the one its entry states", async () => {
    const { contents } = await setup();
    const body = randomBytes(300_000);
    await expect(
      contents.addLarge(
        file("big", body.byteLength + 1),
        (async function* () {
          yield body;
        })(),
      ),
    ).rejects.toThrow(/300000 bytes where 300001/);
  });
});
