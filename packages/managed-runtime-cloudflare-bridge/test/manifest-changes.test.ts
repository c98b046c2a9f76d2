import { createHash } from "node:crypto";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import {
  type ChangeItem,
  type ManifestChanges,
  computeChanges,
} from "../src/checkpoint/manifest-changes.js";
import {
  MANIFEST_HANDLE_FORMAT,
  type ManifestHandleMetadata,
} from "../src/checkpoint/manifest-handle.js";
import type { ManifestEntry } from "../src/checkpoint/manifest.js";
import { type ManifestItem, encodeManifestLines } from "../src/checkpoint/manifest-lines.js";
import { mergeDelta } from "../src/checkpoint/sandbox-delta.js";
import { type RecordGroup, recordGroups } from "../src/checkpoint/sandbox-records.js";
import { DeltaInconsistent } from "../src/checkpoint/touched-paths.js";
import { pathKey } from "../src/checkpoint/split-records.js";
import { prng } from "./random-workspace.js";

// computeChanges merges the sandbox's changed records and the previous delta with the base as the base
// streams past, holding no map of the touched paths. Checked here over real /3 manifests in an in-memory
// store and record files as the sandbox writes them (`LC_ALL=C`-sorted, NUL-terminated): laid over the base,
// each delta must give exactly the workspace the records describe, two deltas deep.

function sha(seed: string): string {
  return createHash("sha256").update(seed).digest("hex");
}

const byPath = (a: { path: string }, b: { path: string }) =>
  Buffer.compare(pathKey(a.path), pathKey(b.path));

async function putManifest(
  store: BlobStore,
  entries: readonly ManifestEntry[],
): Promise<ManifestHandleMetadata> {
  const chunks: Buffer[] = [];
  for await (const chunk of encodeManifestLines(
    (async function* () {
      yield* entries;
    })(),
  ))
    chunks.push(Buffer.from(chunk));
  const bytes = Buffer.concat(chunks);
  const hash = createHash("sha256").update(bytes).digest("hex");
  await store.put(`m/${hash}`, bytes);
  return {
    format: MANIFEST_HANDLE_FORMAT,
    session: "0".repeat(32),
    contentHash: `sha256:${hash}`,
    size: bytes.byteLength,
    manifestKey: `m/${hash}`,
  };
}

/** A workspace as the sandbox lists it: entries (files with their hash) by path. */
type Tree = Map<string, ManifestEntry>;

/** The `e` record the sandbox's listing writes for an entry (`%y %m %s %T@ %l`). */
function entryRecord(entry: ManifestEntry): string {
  const [kind, size, target] =
    entry.type === "file"
      ? ["f", entry.size, ""]
      : entry.type === "symlink"
        ? ["l", entry.target.length, entry.target]
        : ["d", 4096, ""];
  return `${entry.path}//e${kind} ${entry.mode.toString(8)} ${size} ${entry.mtime}.1234567890 ${target}`;
}

/** What a later pass sends: the entry records only one side has, and a hash record for each file it hashed. */
function records(before: Tree, after: Tree, hashed: ReadonlySet<string>) {
  const cached = new Set([...before.values()].map(entryRecord));
  const listed = new Set([...after.values()].map(entryRecord));
  const removed = [...cached].filter((record) => !listed.has(record));
  const added = [...listed].filter((record) => !cached.has(record));
  for (const path of hashed) {
    const entry = after.get(path);
    if (entry?.type === "file") added.push(`${path}//h${entry.sha256}`);
  }
  const file = (lines: string[]) =>
    Buffer.concat(lines.map((line) => Buffer.from(`${line}\0`)).sort(Buffer.compare));
  return { removed: file(removed), added: file(added) };
}

/** A previous delta's lines as the driver reads them back. */
function priorOf(items: readonly ManifestItem[]) {
  return {
    count: items.length,
    async *items() {
      yield* items;
    },
  };
}

/** Every line of a delta, read back from its spool (which is then removed). */
async function linesOf(changes: ManifestChanges): Promise<ChangeItem[]> {
  const lines: ChangeItem[] = [];
  for await (const line of changes.items()) lines.push(line);
  expect(lines).toHaveLength(changes.itemCount);
  await changes.dispose();
  return lines;
}

const SPOOL = { maxBytes: 1 << 30 };

function groups(bytes: Buffer): () => AsyncIterable<RecordGroup> {
  return () =>
    recordGroups(
      (async function* () {
        for (let offset = 0; offset < bytes.byteLength; offset += 61)
          yield bytes.subarray(offset, offset + 61);
      })(),
      true,
    );
}

/** The workspace a delta's items describe over the base's entries. */
function overlay(base: readonly ManifestEntry[], items: readonly ChangeItem[]): ManifestEntry[] {
  const tree = new Map(base.map((entry) => [entry.path, entry]));
  for (const { item } of items) {
    if (item.type === "removed") tree.delete(item.path);
    else tree.set(item.path, item);
  }
  return [...tree.values()].sort(byPath);
}

const plain = (entry: ManifestEntry): ManifestEntry =>
  entry.type === "file"
    ? {
        type: "file",
        path: entry.path,
        mode: entry.mode,
        mtime: entry.mtime,
        size: entry.size,
        sha256: entry.sha256,
      }
    : entry;

/** A random base tree: folders, symlinks, packed files and files in blobs of their own. */
function randomTree(random: () => number): Tree {
  const pack = { sha256: sha("pack"), size: 1 << 20 };
  const tree: Tree = new Map();
  for (let index = 0; index < 150; index += 1) {
    const path = `${["a", "b", "c/d", "é"][Math.floor(random() * 4)]}/${Math.floor(random() * 400)}`;
    const roll = random();
    if (roll < 0.1) tree.set(path, { type: "directory", path, mode: 0o755, mtime: 100 });
    else if (roll < 0.2)
      tree.set(path, { type: "symlink", path, mode: 0o777, mtime: 100, target: "t" });
    else
      tree.set(path, {
        type: "file",
        path,
        mode: 0o644,
        mtime: 100,
        size: 10 + index,
        sha256: sha(`c${index}`),
        ...(roll < 0.9 ? { location: { pack, offset: index } } : {}),
      });
  }
  return tree;
}

/** Changes a tree at random: rewrites, same-bytes rewrites, chmods, removals, new paths before, among and after the rest. */
function mutate(
  random: () => number,
  tree: Tree,
  step: number,
): { after: Tree; hashed: Set<string> } {
  const after: Tree = new Map([...tree].map(([path, entry]) => [path, plain(entry)]));
  const hashed = new Set<string>();
  const paths = [...after.keys()];
  for (let index = 0; index < 12; index += 1) {
    const path = paths[Math.floor(random() * paths.length)] as string;
    const entry = after.get(path);
    const roll = random();
    if (!entry) continue;
    if (roll < 0.25) after.delete(path);
    else if (roll < 0.4 && entry.type === "file")
      hashed.add(path); // written again with the same bytes
    else if (roll < 0.6 && entry.type === "file") {
      after.set(path, {
        ...entry,
        mtime: 200 + step,
        size: entry.size + 1,
        sha256: sha(`${path} ${step}`),
      });
      hashed.add(path);
    } else if (roll < 0.7) after.set(path, { ...entry, mode: 0o700 });
    else if (roll < 0.8) {
      after.set(path, { type: "directory", path, mode: 0o755, mtime: 300 });
      hashed.delete(path);
    }
  }
  for (const path of ["0-first", "b/zz-new", "c/d/0", `ｚ-after-all-${step}`, `a/new-${step}`]) {
    if (random() < 0.5) continue;
    // A new file, sometimes a copy of a content the base holds.
    const copied = [...tree.values()].find((entry) => entry.type === "file" && random() < 0.1);
    after.set(path, {
      type: "file",
      path,
      mode: 0o644,
      mtime: 400,
      size: 5,
      sha256: copied?.type === "file" ? copied.sha256 : sha(`${path} ${step}`),
    });
    hashed.add(path);
  }
  return { after, hashed };
}

describe("computeChanges", () => {
  it("gives, laid over the base, exactly the workspace the records describe, two deltas deep (30 seeds)", async () => {
    for (let seed = 1; seed <= 30; seed += 1) {
      const random = prng(seed);
      const store = createMemoryBlobStore();
      const first = randomTree(random);
      const baseEntries = [...first.values()].sort(byPath);
      const base = await putManifest(store, baseEntries);
      let before: Tree = first;
      let prior: ManifestItem[] = [];
      for (let step = 1; step <= 2; step += 1) {
        const { after, hashed } = mutate(random, before, step);
        const { removed, added } = records(before, after, hashed);
        const changes = await computeChanges({
          store,
          base,
          prior: priorOf(prior),
          removed: groups(removed),
          added: groups(added),
          listedCount: after.size,
          maxItems: 1000,
          spool: SPOOL,
        });
        const label = `seed ${seed}, step ${step}`;
        expect(changes, label).not.toBeNull();
        if (!changes) return;
        const items = await linesOf(changes);
        const want = [...after.values()].sort(byPath);
        expect(overlay(baseEntries, items).map(plain), label).toEqual(want);
        expect(changes.count, label).toBe(want.length);
        expect(changes.bytes, label).toBe(
          want.reduce((total, entry) => total + (entry.type === "file" ? entry.size : 0), 0),
        );
        // A fresh line is what this pass changed; any other is a removal from the base or the previous delta's line as it was.
        for (const { item, fresh } of items) {
          const was = before.get(item.path);
          if (fresh) expect(item, `${label}: ${item.path}`).not.toEqual(was && plain(was));
          else if (item.type === "removed")
            expect(first.has(item.path), `${label}: ${item.path}`).toBe(true);
          else
            expect(
              prior.some((line) => JSON.stringify(line) === JSON.stringify(item)),
              `${label}: ${item.path}`,
            ).toBe(true);
        }
        // Every content hashed in this pass that the base holds is located there.
        for (const path of hashed) {
          const now = after.get(path);
          if (now?.type !== "file") continue;
          const held = baseEntries.find(
            (entry) => entry.type === "file" && entry.sha256 === now.sha256,
          );
          expect(changes.baseContents.has(now.sha256), `${label}: ${path}`).toBe(
            held !== undefined,
          );
        }
        prior = items.map(({ item }) => item);
        before = after;
      }
    }
  });

  it("gives up (null) on records the base contradicts, a count other than the sandbox's, too many changes and records out of order", async () => {
    const store = createMemoryBlobStore();
    const tree = randomTree(prng(7));
    const base = await putManifest(store, [...tree.values()].sort(byPath));
    const { after, hashed } = mutate(prng(8), tree, 1);
    const { removed, added } = records(tree, after, hashed);
    const input = {
      store,
      base,
      prior: priorOf([]),
      removed: groups(removed),
      added: groups(added),
      listedCount: after.size,
      maxItems: 1000,
      spool: SPOOL,
    };
    const fits = await computeChanges(input);
    expect(fits).not.toBeNull();
    const lines = fits ? await linesOf(fits) : [];
    expect(await computeChanges({ ...input, listedCount: after.size + 1 })).toBeNull();
    expect(await computeChanges({ ...input, maxItems: 2 })).toBeNull();
    // A hash of a path that neither the base nor this pass's entries hold.
    const withGhost = Buffer.concat(
      [...added.toString("latin1").split("\0").filter(Boolean), `ghost//h${sha("ghost")}`]
        .map((record) => Buffer.from(`${record}\0`, "latin1"))
        .sort(Buffer.compare),
    );
    expect(await computeChanges({ ...input, added: groups(withGhost) })).toBeNull();
    // A file whose entry changed with no hash for it anywhere: the base held a folder there.
    const folder = [...tree.values()].find((entry) => entry.type === "directory") as ManifestEntry;
    const unhashed = records(
      tree,
      new Map([
        ...tree,
        [
          folder.path,
          { type: "file", path: folder.path, mode: 0o644, mtime: 1, size: 3, sha256: sha("x") },
        ],
      ]),
      new Set(),
    );
    expect(
      await computeChanges({
        ...input,
        removed: groups(unhashed.removed),
        added: groups(unhashed.added),
        listedCount: tree.size,
      }),
    ).toBeNull();
    // A path the previous pass listed but its manifest left out (removed before it was hashed) may go unremarked.
    const listedOnly = new Map([
      ...tree,
      ["ghost", { type: "directory", path: "ghost", mode: 0o755, mtime: 1 } as ManifestEntry],
    ]);
    const unremarked = await computeChanges({
      ...input,
      removed: groups(records(listedOnly, after, hashed).removed),
    });
    expect(unremarked && (await linesOf(unremarked))).toEqual(lines);
    // A previous delta whose lines are out of order.
    const disordered: ManifestItem[] = [
      { type: "removed", path: "b/1" },
      { type: "removed", path: "a/1" },
    ];
    expect(await computeChanges({ ...input, prior: priorOf(disordered) })).toBeNull();
    // Records out of order are the sandbox's fault, refused by the record reader (its caller then takes the full listing).
    await expect(
      computeChanges({
        ...input,
        added: groups(Buffer.from("b/1//ef 644 5 1.0 \0a/1//ef 644 5 1.0 \0")),
      }),
    ).rejects.toThrow();
  });
});

// mergeDelta is the fallback of a delta given up: the previous manifest's entries and the records merged into
// the full listing, over the same three-way merge of sorted sources (`touchedPaths`).
describe("mergeDelta", () => {
  async function merged(
    before: Tree,
    removed: Buffer,
    added: Buffer,
    listed: number,
  ): Promise<ManifestEntry[]> {
    const entries: ManifestEntry[] = [];
    const previous = (async function* () {
      yield* [...before.values()].sort(byPath);
    })();
    for await (const entry of mergeDelta(previous, groups(removed)(), groups(added)(), listed))
      entries.push(entry);
    return entries;
  }

  it("gives exactly the workspace the records describe, its contents to be located afresh (30 seeds)", async () => {
    for (let seed = 101; seed <= 130; seed += 1) {
      const random = prng(seed);
      const before = randomTree(random);
      const { after, hashed } = mutate(random, before, 1);
      const { removed, added } = records(before, after, hashed);
      const entries = await merged(before, removed, added, after.size);
      expect(entries, `seed ${seed}`).toEqual([...after.values()].sort(byPath));
      expect(
        entries.some((entry) => entry.type === "file" && entry.location),
        `seed ${seed}`,
      ).toBe(false);
    }
  });

  it("refuses a count other than the sandbox's, a hash of a folder and records out of order", async () => {
    const before = randomTree(prng(9));
    const { after, hashed } = mutate(prng(10), before, 1);
    const { removed, added } = records(before, after, hashed);
    await expect(merged(before, removed, added, after.size + 1)).rejects.toBeInstanceOf(
      DeltaInconsistent,
    );
    // A folder the records leave as it was: a hash record alone at its path.
    const folder = [...before.values()].find(
      (entry) =>
        entry.type === "directory" &&
        JSON.stringify(after.get(entry.path)) === JSON.stringify(entry),
    ) as ManifestEntry;
    const withFolderHash = Buffer.concat([added, Buffer.from(`${folder.path}//h${sha("x")}\0`)]);
    const sorted = Buffer.concat(
      withFolderHash
        .toString("latin1")
        .split("\0")
        .filter(Boolean)
        .map((record) => Buffer.from(`${record}\0`, "latin1"))
        .sort(Buffer.compare),
    );
    await expect(merged(before, removed, sorted, after.size)).rejects.toBeInstanceOf(
      DeltaInconsistent,
    );
    await expect(merged(before, removed, withFolderHash, after.size)).rejects.toThrow();
  });
});
