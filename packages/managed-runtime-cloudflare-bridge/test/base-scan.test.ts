import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { describe, expect, it } from "vitest";
import { prescanBase } from "../src/checkpoint/base-prescan.js";
import { scanBase } from "../src/checkpoint/base-scan.js";
import {
  MANIFEST_HANDLE_FORMAT,
  type ManifestHandleMetadata,
} from "../src/checkpoint/manifest-handle.js";
import type { ManifestEntry, PackLocation } from "../src/checkpoint/manifest.js";
import { MANIFEST_V3_HEADER, encodeManifestLines } from "../src/checkpoint/manifest-lines.js";
import { compareKeys, pathKey } from "../src/checkpoint/split-records.js";
import { wantedVisitor } from "./base-visitor.js";
import { prng } from "./random-workspace.js";
import { codeOf } from "./runtime-helpers.js";

// scanBase reads every line of a base manifest in place (a fast path for lines as this driver writes them,
// a field search for any other): checked here against what the entries say, over real encoded manifests
// in an in-memory blob store that hands the bytes out in chunks of every size.
const NAMES = [
  "a",
  "a-b",
  "a.b",
  "b",
  "é",
  "日本",
  'q"uote',
  "back\\slash",
  "sp ace",
  "z",
  "a0",
  "Z",
  "tab\tname",
];

function sha(seed: string): string {
  return createHash("sha256").update(seed).digest("hex");
}

/**
 * A store whose objects stream in chunks of `size` bytes, so lines are cut at every position. With `reuse`,
 * every chunk is copied into one buffer when it is read, as `bodyChunks` hands out a byte stream's chunks:
 * a chunk is then valid only until the next read.
 */
function chunkedStore(store: BlobStore, size: number, reuse = false): BlobStore {
  return {
    ...store,
    async get(key) {
      const object = await store.get(key);
      if (!object) return null;
      const bytes = await object.bytes();
      const shared = new Uint8Array(size);
      return {
        ...object,
        stream: () => {
          let offset = 0;
          return new ReadableStream<Uint8Array>(
            {
              pull(controller) {
                if (offset >= bytes.byteLength) return controller.close();
                const piece = bytes.subarray(offset, offset + size);
                offset += piece.byteLength;
                if (!reuse) return controller.enqueue(piece);
                shared.fill(0x2f).set(piece);
                controller.enqueue(shared.subarray(0, piece.byteLength));
              },
            },
            { highWaterMark: 0 },
          );
        },
      };
    },
  };
}

async function putBytes(store: BlobStore, bytes: Buffer): Promise<ManifestHandleMetadata> {
  const sha256 = sha(bytes.toString("latin1"));
  const contentHash = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  const manifestKey = `m/${sha256}`;
  await store.put(manifestKey, bytes);
  return {
    format: MANIFEST_HANDLE_FORMAT,
    session: "0".repeat(32),
    contentHash,
    size: bytes.byteLength,
    manifestKey,
  };
}

async function encode(entries: readonly ManifestEntry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of encodeManifestLines(
    (async function* () {
      yield* entries;
    })(),
  ))
    chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A random tree's entries in manifest order: folders, symlinks, files packed, in blobs of their own and empty. */
function randomEntries(random: () => number, names: readonly string[] = NAMES): ManifestEntry[] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
  const packs = [0, 1, 2].map((index) => ({ sha256: sha(`pack${index}`), size: 10_000 }));
  const paths = new Set<string>();
  for (let index = 0; index < 120; index += 1)
    paths.add(
      [pick(names), pick(names), pick(names)].slice(0, 1 + Math.floor(random() * 3)).join("/"),
    );
  const entries: ManifestEntry[] = [];
  for (const path of [...paths].sort((a, b) => Buffer.compare(pathKey(a), pathKey(b)))) {
    const roll = random();
    const content = sha(`content${Math.floor(random() * 90)}`);
    if (roll < 0.15) entries.push({ type: "directory", path, mode: 0o755, mtime: 7 });
    else if (roll < 0.25)
      entries.push({ type: "symlink", path, mode: 0o777, mtime: 7, target: pick(names) });
    else if (roll < 0.3)
      entries.push({ type: "file", path, mode: 0o644, mtime: 7, size: 0, sha256: sha("") });
    else if (roll < 0.5)
      entries.push({
        type: "file",
        path,
        mode: 0o600,
        mtime: 9,
        size: 300_000 + Math.floor(random() * 1000),
        sha256: content,
      });
    else
      entries.push({
        type: "file",
        path,
        mode: 0o644,
        mtime: 8,
        size: 1 + Math.floor(random() * 500),
        sha256: content,
        location: { pack: pick(packs), offset: Math.floor(random() * 9000) },
      });
  }
  return entries;
}

/** `count` files in one pack, in manifest order: a base of many store reads. */
function packedFiles(count: number) {
  const pack = { sha256: sha("pack"), size: 1 << 20 };
  const paths = Array.from(
    { length: count },
    (_, index) => `src/module-${index % 97}/file-${index}.ts`,
  ).sort((a, b) => Buffer.compare(pathKey(a), pathKey(b)));
  const entries: ManifestEntry[] = paths.map((path, index) => ({
    type: "file",
    path,
    mode: 0o644,
    mtime: 8,
    size: 10 + index,
    sha256: sha(path),
    location: { pack, offset: index },
  }));
  return { pack, paths, entries };
}

/** What a scan must find, worked out from the entries themselves. */
function expected(
  entries: readonly ManifestEntry[],
  wanted: ReadonlySet<string>,
  contents: ReadonlySet<string>,
) {
  const files = entries.filter((entry) => entry.type === "file");
  const packs = [
    ...new Set(files.flatMap((entry) => (entry.location ? [entry.location.pack.sha256] : []))),
  ];
  const located = new Map<string, PackLocation | null>();
  for (const entry of files)
    if (
      entry.size > 0 &&
      entry.location &&
      contents.has(entry.sha256) &&
      !located.has(entry.sha256)
    )
      located.set(entry.sha256, entry.location);
  for (const entry of files)
    if (
      entry.size > 0 &&
      !entry.location &&
      contents.has(entry.sha256) &&
      !located.has(entry.sha256)
    )
      located.set(entry.sha256, null);
  const found = new Map<string, ManifestEntry>();
  for (const entry of entries) {
    if (!wanted.has(entry.path)) continue;
    if (entry.type !== "file" || !entry.location) found.set(entry.path, entry);
    else {
      const { location: _, ...plain } = entry;
      found.set(entry.path, plain);
    }
  }
  return {
    count: entries.length,
    bytes: files.reduce((total, entry) => total + entry.size, 0),
    found,
    objects: {
      packs,
      blobs: files
        .filter((entry) => entry.size > 0 && !entry.location)
        .map((entry) => entry.sha256),
    },
    contents: located,
  };
}

describe("scanBase", () => {
  it("finds totals, objects, the wanted entries and the asked contents as the entries say, at any chunk size (30 seeds)", {
    timeout: 60_000,
  }, async () => {
    for (let seed = 1; seed <= 30; seed += 1) {
      const random = prng(seed);
      const entries = randomEntries(random);
      const wanted = new Set([
        ...entries.filter(() => random() < 0.3).map((entry) => entry.path),
        "absent",
        "a/absent",
        "é/x",
        "ｚ-after-all",
      ]);
      const contents = new Set([
        ...entries.flatMap((entry) =>
          entry.type === "file" && random() < 0.4 ? [entry.sha256] : [],
        ),
        sha("nowhere"),
      ]);
      const store = createMemoryBlobStore();
      const base = await putBytes(store, await encode(entries));
      const want = expected(entries, wanted, contents);
      for (const [size, reuse] of [
        [1, false],
        [7, false],
        [64, false],
        [1 << 20, false],
        [7, true],
        [64, true],
        [1000, true],
      ] as const) {
        const { visitor, found, lacking } = wantedVisitor(wanted);
        const scan = await scanBase(chunkedStore(store, size, reuse), base, contents, visitor);
        expect(
          {
            ...scan,
            found: new Map([...found].sort()),
            lacking: lacking.sort(),
            contents: new Map([...scan.contents].sort()),
          },
          `seed ${seed}, chunks of ${size}${reuse ? " in one reused buffer" : ""}`,
        ).toEqual({
          ...want,
          found: new Map([...want.found].sort()),
          lacking: [...wanted].filter((path) => !want.found.has(path)).sort(),
          contents: new Map([...want.contents].sort()),
        });
      }
    }
  });

  it("scans a base of many reads through the fs store, whose byte streams are read into one reused buffer", async () => {
    const directory = await mkdtemp(join(tmpdir(), "oma-base-scan-"));
    try {
      const store = createFsBlobStore({ rootDir: directory });
      const { paths, entries } = packedFiles(6000);
      const bytes = await encode(entries);
      expect(bytes.byteLength).toBeGreaterThan(4 * 256 * 1024);
      const base = await putBytes(store, bytes);
      const wanted = new Set(paths.filter((_, index) => index % 500 === 3));
      const contents = new Set(
        entries.flatMap((entry, index) =>
          entry.type === "file" && index % 700 === 5 ? [entry.sha256] : [],
        ),
      );
      const { visitor, found } = wantedVisitor(wanted);
      const scan = await scanBase(store, base, contents, visitor);
      expect({ ...scan, found }).toEqual(expected(entries, wanted, contents));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("reads lines whose fields come in another order alike", async () => {
    const pack = { sha256: sha("pack"), size: 100 };
    const entries: ManifestEntry[] = [
      {
        type: "file",
        path: "a",
        mode: 0o644,
        mtime: 1,
        size: 5,
        sha256: sha("a"),
        location: { pack, offset: 3 },
      },
      { type: "file", path: "b", mode: 0o644, mtime: 1, size: 400_000, sha256: sha("b") },
    ];
    const lines = [
      MANIFEST_V3_HEADER.trimEnd(),
      JSON.stringify({ type: "pack", size: 100, sha256: pack.sha256 }),
      JSON.stringify({
        type: "file",
        path: "a",
        sha256: sha("a"),
        offset: 3,
        size: 5,
        pack: 0,
        mtime: 1,
        mode: 0o644,
      }),
      JSON.stringify({
        type: "file",
        path: "b",
        size: 400_000,
        mode: 0o644,
        sha256: sha("b"),
        mtime: 1,
      }),
    ];
    const store = createMemoryBlobStore();
    const base = await putBytes(store, Buffer.from(`${lines.join("\n")}\n`));
    const { visitor, found } = wantedVisitor(["a", "b"]);
    const scan = await scanBase(store, base, new Set([sha("a"), sha("b")]), visitor);
    expect({ ...scan, found }).toEqual(
      expected(entries, new Set(["a", "b"]), new Set([sha("a"), sha("b")])),
    );
  });

  it("refuses lines out of order, a line without a path or size, a file without a hash, and a path that is not JSON", async () => {
    const file = (path: string) => ({
      type: "file",
      path,
      mode: 420,
      mtime: 1,
      size: 5,
      sha256: sha(path),
    });
    const bad = [
      [file("b"), file("a")],
      [file("a"), file("a")],
      [file("a/b"), file("a-b")],
      [{ type: "directory", mode: 493, mtime: 1 }],
      [{ type: "file", path: "a", mode: 420, mtime: 1, sha256: sha("a") }],
      [{ type: "file", path: "a", mode: 420, mtime: 1, size: 5 }],
      // An escape that is no JSON, in a path read for its order only.
      ['{"type":"directory","path":"a\\x\\","mode":493,"mtime":1}'],
    ];
    for (const lines of bad) {
      const store = createMemoryBlobStore();
      const base = await putBytes(
        store,
        Buffer.from(
          `${[MANIFEST_V3_HEADER.trimEnd(), ...lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line)))].join("\n")}\n`,
        ),
      );
      expect(await codeOf(scanBase(store, base)), JSON.stringify(lines)).toBe("integrity_failed");
    }
  });
});

describe("prescanBase", () => {
  // The base read ahead while the sandbox walks: its totals first, then a second read of the driver's copy
  // that meets the visitor's paths. Lines as the driver writes them read by position; any other base (an
  // escaped path, fields in another order) takes a full scan of the copy. Both must find what one scan does.
  const PLAIN = ["a", "a-b", "a.b", "b", "é", "日本", "sp ace", "z", "a0", "Z"];

  it("finds what one scan finds, by position where every line allows it and in full where not (30 seeds each)", {
    timeout: 60_000,
  }, async () => {
    for (const [names, placed] of [
      [PLAIN, true],
      [NAMES, false],
    ] as const) {
      for (let seed = 1; seed <= 30; seed += 1) {
        const random = prng(seed);
        const entries = randomEntries(random, names);
        const wanted = new Set([
          ...entries.filter(() => random() < 0.3).map((entry) => entry.path),
          "absent",
          "a/absent",
          "é/x",
          "ｚ-after-all",
        ]);
        const contents = new Set([
          ...entries.flatMap((entry) =>
            entry.type === "file" && random() < 0.4 ? [entry.sha256] : [],
          ),
          sha("nowhere"),
          sha(""),
        ]);
        const store = createMemoryBlobStore();
        const base = await putBytes(store, await encode(entries));
        const want = expected(entries, wanted, contents);
        for (const [size, reuse] of [
          [61, true],
          [1 << 20, false],
        ] as const) {
          const prescanned = await prescanBase(chunkedStore(store, size, reuse), base);
          const label = `seed ${seed}${placed ? "" : " with escapes"}, chunks of ${size}`;
          try {
            expect(
              {
                count: prescanned.count,
                bytes: prescanned.bytes,
                objects: prescanned.objects,
                placed: prescanned.placed,
              },
              label,
            ).toEqual({
              count: want.count,
              bytes: want.bytes,
              objects: want.objects,
              placed: placed || !hasEscape(entries),
            });
            const { visitor, found, lacking } = wantedVisitor(wanted);
            const scan = await prescanned.scan(contents, visitor);
            expect(
              {
                ...scan,
                found: new Map([...found].sort()),
                lacking: lacking.sort(),
                contents: new Map([...scan.contents].sort()),
              },
              label,
            ).toEqual({
              ...want,
              found: new Map([...want.found].sort()),
              lacking: [...wanted].filter((path) => !want.found.has(path)).sort(),
              contents: new Map([...want.contents].sort()),
            });
            await expect(prescanned.scan(contents, visitor)).rejects.toThrow();
          } finally {
            await prescanned.dispose();
          }
        }
      }
    }
  });

  it("finds across many blocks of the copy what one scan finds, pack declarations between the lines (5 seeds)", {
    timeout: 60_000,
  }, async () => {
    for (let seed = 1; seed <= 5; seed += 1) {
      const random = prng(100 + seed);
      const paths = new Set<string>();
      while (paths.size < 20_000)
        paths.add(
          `d${Math.floor(random() * 40)}/${"s".repeat(1 + Math.floor(random() * 30))}${Math.floor(random() * 50)}/f${Math.floor(random() * 1000)}`,
        );
      const sorted = [...paths].sort((a, b) => Buffer.compare(pathKey(a), pathKey(b)));
      const entries: ManifestEntry[] = sorted.map((path, index) => {
        if (index % 41 === 0) return { type: "directory", path, mode: 0o755, mtime: 3 };
        const pack = { sha256: sha(`pack${Math.floor(index / 37)}`), size: 1 << 20 };
        const content = sha(`content${Math.floor(random() * 15_000)}`);
        if (index % 53 === 0)
          return { type: "file", path, mode: 0o644, mtime: 5, size: 400_000, sha256: content };
        return {
          type: "file",
          path,
          mode: 0o644,
          mtime: 5,
          size: 1 + (index % 900),
          sha256: content,
          location: { pack, offset: index % 1000 },
        };
      });
      const wanted = new Set([
        ...sorted.filter(() => random() < 0.02),
        ...sorted
          .filter(() => random() < 0.005)
          .flatMap((path) => [`${path}-absent`, `${path}/below`, path.slice(0, -1)]),
        "0-first",
        "zz-last",
      ]);
      const contents = new Set([
        ...entries.flatMap((entry) =>
          entry.type === "file" && random() < 0.01 ? [entry.sha256] : [],
        ),
        sha("nowhere"),
      ]);
      const store = createMemoryBlobStore();
      const base = await putBytes(store, await encode(entries));
      const once = wantedVisitor(wanted);
      const reference = await scanBase(store, base, contents, once.visitor);
      const prescanned = await prescanBase(store, base);
      try {
        const searched = wantedVisitor(wanted);
        expect(prescanned.placed).toBe(true);
        const scan = await prescanned.scan(contents, searched.visitor);
        expect(
          { ...scan, found: searched.found, lacking: searched.lacking },
          `seed ${seed}`,
        ).toEqual({ ...reference, found: once.found, lacking: once.lacking });
        expect(once.found.size).toBeGreaterThan(300);
      } finally {
        await prescanned.dispose();
      }
    }
  });

  it("reads a copy of many reads by position, and a base of fields in another order in full", async () => {
    const directory = await mkdtemp(join(tmpdir(), "oma-base-prescan-"));
    try {
      const store = createFsBlobStore({ rootDir: directory });
      const { pack, paths, entries } = packedFiles(6000);
      const base = await putBytes(store, await encode(entries));
      const wanted = new Set(paths.filter((_, index) => index % 500 === 3));
      const contents = new Set(
        entries.flatMap((entry, index) =>
          entry.type === "file" && index % 700 === 5 ? [entry.sha256] : [],
        ),
      );
      const prescanned = await prescanBase(store, base, { directory });
      const { visitor, found } = wantedVisitor(wanted);
      expect(prescanned.placed).toBe(true);
      expect({ ...(await prescanned.scan(contents, visitor)), found }).toEqual(
        expected(entries, wanted, contents),
      );
      await prescanned.dispose();

      const reordered = [
        MANIFEST_V3_HEADER.trimEnd(),
        JSON.stringify({ type: "pack", size: 100, sha256: pack.sha256 }),
        JSON.stringify({
          type: "file",
          path: "a",
          sha256: sha("a"),
          offset: 3,
          size: 5,
          pack: 0,
          mtime: 1,
          mode: 0o644,
        }),
      ];
      const other = await putBytes(store, Buffer.from(`${reordered.join("\n")}\n`));
      const full = await prescanBase(store, other, { directory });
      const second = wantedVisitor(["a"]);
      expect(full.placed).toBe(false);
      expect((await full.scan(new Set([sha("a")]), second.visitor)).contents).toEqual(
        new Map([[sha("a"), { pack: { sha256: pack.sha256, size: 100 }, offset: 3 }]]),
      );
      expect(second.found.get("a")).toEqual({
        type: "file",
        path: "a",
        mode: 0o644,
        mtime: 1,
        size: 5,
        sha256: sha("a"),
      });
      await full.dispose();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("refuses a base whose bytes do not match its handle or do not parse, and stops when aborted", async () => {
    const store = createMemoryBlobStore();
    const entries: ManifestEntry[] = [
      { type: "file", path: "a", mode: 0o644, mtime: 1, size: 5, sha256: sha("a") },
    ];
    const base = await putBytes(store, await encode(entries));
    await store.put(
      base.manifestKey,
      Buffer.from((await encode(entries)).toString().replace('"mtime":1', '"mtime":2')),
    );
    expect(await codeOf(prescanBase(store, base))).toBe("integrity_failed");
    const disordered = await putBytes(
      store,
      Buffer.from(
        `${[MANIFEST_V3_HEADER.trimEnd(), JSON.stringify({ type: "directory", path: "b", mode: 493, mtime: 1 }), JSON.stringify({ type: "directory", path: "a", mode: 493, mtime: 1 })].join("\n")}\n`,
      ),
    );
    expect(await codeOf(prescanBase(store, disordered))).toBe("integrity_failed");
    const whole = await putBytes(store, await encode(entries));
    const aborted = new AbortController();
    aborted.abort(new Error("walk failed"));
    await expect(prescanBase(store, whole, { signal: aborted.signal })).rejects.toThrow(
      "walk failed",
    );
  });
});

/** Whether an entry's path or link target is written with a JSON escape. */
function hasEscape(entries: readonly ManifestEntry[]): boolean {
  return entries.some(
    (entry) => JSON.stringify(entry.path).length !== Buffer.byteLength(entry.path) + 2,
  );
}

describe("compareKeys", () => {
  it("orders paths as Buffer.compare orders their keys", () => {
    const random = prng(7);
    const paths = [...NAMES, "a/b", "a/b/c", "a//", "a/", "ab", "a\u0000"];
    for (let index = 0; index < 200; index += 1)
      paths.push(
        [
          NAMES[Math.floor(random() * NAMES.length)],
          NAMES[Math.floor(random() * NAMES.length)],
        ].join(random() < 0.5 ? "/" : ""),
      );
    for (const left of paths) {
      for (const right of paths) {
        const a = Buffer.from(left);
        const b = Buffer.from(`__${right}`);
        const order = Math.sign(compareKeys(a, 0, a.length, b, 2, b.length));
        expect(order, `${left} vs ${right}`).toBe(
          Math.sign(Buffer.compare(pathKey(left), pathKey(right))),
        );
      }
    }
  });
});
