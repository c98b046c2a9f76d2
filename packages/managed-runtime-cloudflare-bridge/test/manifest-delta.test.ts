import { createHash } from "node:crypto";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { scanBase } from "../src/checkpoint/base-scan.js";
import { manifestKeyOf } from "../src/checkpoint/blob-keys.js";
import {
  MANIFEST_HANDLE_FORMAT,
  type ManifestHandleMetadata,
} from "../src/checkpoint/manifest-handle.js";
import type { ManifestEntry } from "../src/checkpoint/manifest.js";
import { deltaHeaderLine } from "../src/checkpoint/manifest-delta.js";
import {
  type ManifestItem,
  decodeManifestLines,
  encodeManifestLines,
} from "../src/checkpoint/manifest-lines.js";
import {
  deltaPartsOf,
  openManifest,
  streamManifestOnce,
} from "../src/checkpoint/manifest-store.js";
import { wantedVisitor } from "./base-visitor.js";
import { codeOf } from "./runtime-helpers.js";

// Delta (/4) manifests over a real /3 base in an in-memory blob store: what restores and sweeps read.
const SESSION = "0".repeat(32);
const pack = { sha256: "a".repeat(64), size: 100 };
const file = (path: string, sha = "b", size = 5): ManifestEntry => ({
  type: "file",
  path,
  mode: 0o644,
  mtime: 1,
  size,
  sha256: sha.repeat(64),
});
const BASE: ManifestEntry[] = [
  { type: "directory", path: "d", mode: 0o755, mtime: 1 },
  { ...file('d/a"quoted'), location: { pack, offset: 10 } } as ManifestEntry,
  file("d/big", "c", 300_000),
  file("d/é", "d"),
  { type: "symlink", path: "link", mode: 0o777, mtime: 1, target: "d/big" },
  file("z", "e", 0),
];

async function put(
  store: BlobStore,
  items: AsyncIterable<ManifestItem> | ManifestItem[],
  header?: string,
): Promise<ManifestHandleMetadata> {
  const chunks: Buffer[] = [];
  for await (const chunk of encodeManifestLines(
    (async function* () {
      yield* items;
    })(),
    header,
  ))
    chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const manifestKey = manifestKeyOf("p", SESSION, sha256);
  await store.put(manifestKey, bytes);
  return {
    format: MANIFEST_HANDLE_FORMAT,
    session: SESSION,
    contentHash: `sha256:${sha256}`,
    size: bytes.byteLength,
    manifestKey,
  };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const delta = (base: ManifestHandleMetadata, items: ManifestItem[], store: BlobStore) =>
  put(store, items, deltaHeaderLine({ sha256: base.contentHash.slice(7), size: base.size }));

describe("delta manifests", () => {
  it("lay their lines over the base: replaced, added and removed paths, with the base's pack locations kept", async () => {
    const store = createMemoryBlobStore();
    const base = await put(store, BASE);
    const over = await delta(
      base,
      [
        file("d/big", "f", 7),
        { type: "removed", path: "d/é" },
        file("new"),
        { type: "removed", path: "z" },
      ],
      store,
    );
    const expected = [BASE[0], BASE[1], file("d/big", "f", 7), BASE[4], file("new")];
    const opened = await openManifest(store, over);
    expect(opened.format).toBe("oma-workspace-manifest/4");
    expect(opened.base?.manifestKey).toBe(base.manifestKey);
    expect(await all(opened.entries())).toEqual(expected);
    expect(await all(streamManifestOnce(store, over))).toEqual(expected);
    const parts = await deltaPartsOf(store, over, true);
    expect(parts?.base).toEqual(base);
    if (!parts) throw new Error("no delta parts");
    expect(parts.prior.count).toBe(4);
    // Decoded afresh on every read.
    for (let read = 0; read < 2; read += 1)
      expect((await all(parts.prior.items())).map((item) => item.path)).toEqual([
        "d/big",
        "d/é",
        "new",
        "z",
      ]);
    // A hint that calls a full manifest a delta is read to its end and answered null; a full one is its own base.
    expect(await deltaPartsOf(store, base, true)).toBeNull();
    const whole = await deltaPartsOf(store, base, false);
    if (!whole) throw new Error("no parts of a full manifest");
    expect(whole.base).toEqual(base);
    expect(whole.prior.count).toBe(0);
    expect(await all(whole.prior.items())).toEqual([]);
  });

  it("refuses a removal of a path the base lacks, a tampered or missing base, a delta over a delta, and removals in a full manifest", async () => {
    const store = createMemoryBlobStore();
    const base = await put(store, BASE);
    const stray = await delta(base, [{ type: "removed", path: "nowhere" }], store);
    expect(await codeOf(all((await openManifest(store, stray)).entries()))).toBe(
      "integrity_failed",
    );
    const over = await delta(base, [file("new")], store);
    const deeper = await delta(over, [file("newer")], store);
    expect(await codeOf(openManifest(store, deeper))).toBe("integrity_failed");
    // The base changed after the delta was written: its hash no longer matches the delta's header.
    await store.put(
      base.manifestKey,
      Buffer.from(`${await new Response((await store.get(base.manifestKey))?.stream()).text()} `),
    );
    expect(await codeOf(openManifest(store, over))).toBe("integrity_failed");
    expect(await codeOf(all(streamManifestOnce(store, over)))).toBe("integrity_failed");
    await store.delete(base.manifestKey);
    expect(await codeOf(openManifest(store, over))).toBe("not_found");
    const removalInFull = await put(store, [{ type: "removed", path: "x" }]);
    const stored = await store.get(removalInFull.manifestKey);
    expect(
      await codeOf(
        all(decodeManifestLines(stored?.stream() as unknown as AsyncIterable<Uint8Array>)),
      ),
    ).toBe("integrity_failed");
  });

  it("refuses a header that names no base or carries extra fields", async () => {
    const store = createMemoryBlobStore();
    const base = await put(store, BASE);
    const sha = base.contentHash.slice(7);
    for (const header of [
      `{"format":"oma-workspace-manifest/4","base":"${sha}"}`,
      `{"format":"oma-workspace-manifest/4","base":"${sha}","baseSize":${base.size},"x":1}`,
      `{"format":"oma-workspace-manifest/4","base":"zz","baseSize":1}`,
    ]) {
      const bad = await put(store, [file("new")], header);
      expect(await codeOf(openManifest(store, bad))).toBe("integrity_failed");
    }
  });

  it("reads back the longest lines it writes: a path and a link target of 4096 bytes, each byte a control character JSON spells in six", async () => {
    const long = (character: string) =>
      Array.from({ length: 16 }, () => character.repeat(250)).join("/");
    const entries: ManifestEntry[] = [
      {
        type: "file",
        path: long("\u0001"),
        mode: 0o644,
        mtime: 1,
        size: 5,
        sha256: "b".repeat(64),
        location: { pack, offset: 3 },
      },
      {
        type: "symlink",
        path: long("\u0002"),
        mode: 0o777,
        mtime: 1,
        target: "\u0003".repeat(4096),
      },
    ];
    const store = createMemoryBlobStore();
    const base = await put(store, entries);
    expect(base.size).toBeGreaterThan(48 * 1024);
    expect(await all(streamManifestOnce(store, base))).toEqual(entries);
    const { visitor, found } = wantedVisitor(entries.map((entry) => entry.path));
    const scan = await scanBase(store, base, new Set(["b".repeat(64)]), visitor);
    expect([...found.keys()]).toEqual(entries.map((entry) => entry.path));
    expect(scan.contents.get("b".repeat(64))).toEqual({ pack, offset: 3 });
    const over = await delta(base, [{ type: "removed", path: long("\u0002") }], store);
    expect(await all((await openManifest(store, over)).entries())).toEqual([entries[0]]);
  });

  it("scans a base for a delta: totals, the objects it places contents in, and only the wanted entries parsed", async () => {
    const store = createMemoryBlobStore();
    const base = await put(store, BASE);
    const { visitor, found, lacking } = wantedVisitor(['d/a"quoted', "d/é", "absent"]);
    const scan = await scanBase(store, base, new Set(), visitor);
    expect(scan.count).toBe(BASE.length);
    expect(scan.bytes).toBe(5 + 300_000 + 5);
    expect([...found.keys()]).toEqual(['d/a"quoted', "d/é"]);
    expect(lacking).toEqual(["absent"]);
    // Without its pack location: a delta places its fresh lines anew.
    expect(found.get('d/a"quoted')).toEqual(file('d/a"quoted'));
    expect(scan.objects).toEqual({ packs: [pack.sha256], blobs: ["c".repeat(64), "d".repeat(64)] });
    const over = await delta(base, [file("new")], store);
    expect(await codeOf(scanBase(store, over))).toBe("integrity_failed");
    await store.put(base.manifestKey, Buffer.from("{}\n"));
    expect(await codeOf(scanBase(store, base))).toBe("integrity_failed");
  });
});
