import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { extract } from "tar-stream";
import { afterEach, describe, expect, it } from "vitest";
import { packKeyOf } from "../src/checkpoint/blob-keys.js";
import type { ManifestEntry, PackRef } from "../src/checkpoint/manifest.js";
import { PACK_BYTES, SMALL_BLOB_BYTES } from "../src/checkpoint/pack-writer.js";
import {
  MAX_PACK_READ_BYTES,
  type RestoreArchive,
  assembleRestoreArchive,
} from "../src/checkpoint/restore-archive.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

const limits = { maxEntries: 1000, maxBytes: 1 << 30, maxEntryBytes: 1 << 30 };

describe("restore archive assembly", () => {
  it("refuses a pack larger than any a checkpoint writes before reading it, as integrity_failed", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-assembly-"));
    // A real fs store, empty: the refusal must come before any read (a read would be not_found).
    const store = createFsBlobStore({ rootDir: directory });
    const pack = { sha256: "a".repeat(64), size: MAX_PACK_READ_BYTES + 1 };
    const entries: ManifestEntry[] = [
      {
        type: "file",
        path: "big",
        mode: 0o644,
        mtime: 0,
        size: 10,
        sha256: "b".repeat(64),
        location: { pack, offset: 0 },
      },
    ];
    const listed = async function* () {
      yield* entries;
    };
    const failure = await assembleRestoreArchive(
      { store, keyPrefix: "p", session: "s" },
      listed(),
      { limits, spool: { maxBytes: 1 << 30, directory } },
    ).catch((error: { code?: string; message?: string }) => error);
    expect(failure).toMatchObject({ code: "integrity_failed" });
    expect(String((failure as { message?: string }).message)).toMatch(/larger than any pack/);
  });

  it("reads packs into one scratch buffer, reusing a slot only once its pack is dropped, and hands the scratch on", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-assembly-"));
    const store = createFsBlobStore({ rootDir: directory });
    const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
    // Six packs of eight contents each (every byte of a content names its pack and place), and one pack larger
    // than a slot: packs this driver writes never are, but a store may hold one.
    const packs: { readonly ref: PackRef; readonly contents: Buffer[] }[] = [];
    for (let index = 0; index < 7; index++) {
      const each = index === 6 ? PACK_BYTES / 2 : 4096;
      const contents = Array.from({ length: 8 }, (_, at) =>
        Buffer.alloc(each - at, index * 16 + at + 1),
      );
      const body = Buffer.concat(contents);
      const ref = { sha256: sha256(body), size: body.byteLength };
      await store.put(packKeyOf("p", "s", ref.sha256), body);
      packs.push({ ref, contents });
    }
    expect((packs[6] as { ref: PackRef }).ref.size).toBeGreaterThan(PACK_BYTES + SMALL_BLOB_BYTES);
    // After each new pack the files go back to packs still held, so a slot given to two packs at once would show;
    // the last ones come back to packs dropped long before.
    const order = [0, 1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5, 6, 5, 6, 0, 6, 0, 1, 3];
    const expected = new Map<string, string>();
    const entries: ManifestEntry[] = order.flatMap((pack, visit) => {
      const { ref, contents } = packs[pack] as (typeof packs)[number];
      let offset = 0;
      return contents.map((content, at) => {
        const path = `visit-${String(visit).padStart(2, "0")}/file-${at}`;
        expected.set(path, sha256(content));
        const entry: ManifestEntry = {
          type: "file",
          path,
          mode: 0o644,
          mtime: 0,
          size: content.byteLength,
          sha256: sha256(content),
          location: { pack: ref, offset },
        };
        offset += content.byteLength;
        return entry;
      });
    });
    const listed = async function* () {
      yield* entries;
    };
    const scratchBytes = 16 * 1024 * 1024;
    const archive = await assembleRestoreArchive(
      { store, keyPrefix: "p", session: "s" },
      listed(),
      {
        limits: { ...limits, maxEntries: 1000 },
        spool: { maxBytes: 1 << 30, directory },
        scratchBytes,
      },
    );
    try {
      expect(archive.scratch.byteLength).toBe(scratchBytes);
      expect(await filesOf(archive)).toEqual(expected);
    } finally {
      await archive.dispose();
    }
  });

  it("makes its scratch at least the packs it holds when asked for less", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-assembly-"));
    const store = createFsBlobStore({ rootDir: directory });
    const empty = async function* (): AsyncGenerator<ManifestEntry> {};
    const archive = await assembleRestoreArchive({ store, keyPrefix: "p", session: "s" }, empty(), {
      limits,
      spool: { maxBytes: 1 << 30, directory },
      scratchBytes: 1024,
    });
    expect(archive.scratch.byteLength).toBe(3 * (PACK_BYTES + SMALL_BLOB_BYTES));
    await archive.dispose();
  });
});

/** The sha256 of every file of an assembled archive, by path. */
async function filesOf(archive: RestoreArchive): Promise<Map<string, string>> {
  const tar = async function* () {
    for (const segment of archive.segments)
      for await (const chunk of segment.chunks()) yield Buffer.from(chunk);
  };
  const reader = Readable.from(tar()).pipe(extract());
  const files = new Map<string, string>();
  for await (const member of reader) {
    const hash = createHash("sha256");
    for await (const chunk of member) hash.update(chunk as Buffer);
    if (member.header.type === "file")
      files.set(member.header.name.replace(/^\.\//, ""), hash.digest("hex"));
  }
  return files;
}
