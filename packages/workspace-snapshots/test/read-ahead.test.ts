import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import type { Change } from "../src/change-stream.js";
import { sessionKeys } from "../src/keys.js";
import type { TreeEntry } from "../src/objects.js";
import { createChangeLookahead, createOldTreeReader } from "../src/read-ahead.js";
import { createTreeStore } from "../src/stored-objects.js";

const MTIME = "1700000000.000000000";
const fileChange = (path: string): Change => ({
  path,
  entry: {
    type: "f",
    mode: 0o644,
    size: 1,
    blocks: 8,
    mtime: MTIME,
    inode: "1",
    links: 1,
    target: "",
  },
  hash: "0".repeat(64),
  removed: false,
});

async function* changesOf(paths: string[], failAtEnd = false): AsyncGenerator<Change> {
  for (const path of paths) yield fileChange(path);
  if (failAtEnd) throw new Error("the stream broke off");
}

/** A store that counts the reads of each key. */
function countingStore(): { store: BlobStore; reads: string[] } {
  const inner = createMemoryBlobStore();
  const reads: string[] = [];
  const store: BlobStore = {
    ...inner,
    get: (key, ...rest) => {
      reads.push(key);
      return inner.get(key, ...rest);
    },
  };
  return { store, reads };
}

describe("the change lookahead", () => {
  it("gives every change in order, then the end", async () => {
    const changes = createChangeLookahead(changesOf(["a", "b/c", "d"]), 2);
    const seen: string[] = [];
    for (let change = await changes.peek(); change; change = await changes.peek()) {
      seen.push(change.path);
      changes.take();
    }
    expect(seen).toEqual(["a", "b/c", "d"]);
  });

  it("fails where the stream broke off instead of ending there", async () => {
    const changes = createChangeLookahead(changesOf(["a", "b"], true), 8);
    expect((await changes.peek())?.path).toBe("a");
    changes.take();
    expect((await changes.peek())?.path).toBe("b");
    changes.take();
    await expect(changes.peek()).rejects.toThrow("the stream broke off");
  });

  it("names the children of a folder that changes in the window lead into", async () => {
    const changes = createChangeLookahead(changesOf(["top/a/x", "top/b", "top/c/d/e", "other/f"]));
    await changes.peek();
    expect([...changes.childrenChanged("top")]).toEqual(["a", "c"]);
    expect([...changes.childrenChanged("")]).toEqual(["top", "other"]);
  });
});

describe("the old tree reader", () => {
  it("reads the trees on changed paths before the walk opens them, each once", async () => {
    const { store, reads } = countingStore();
    const trees = createTreeStore(store, sessionKeys("snapshots", "a".repeat(32)));
    const dir = (name: string, tree: string, seconds = 1_700_000_000): TreeEntry => ({
      name,
      type: "dir",
      mode: 0o755,
      mtime: `${seconds}.000000000`,
      tree,
    });
    const leaf = await trees.write({ version: 1, entries: [] });
    const subtrees: Record<string, string> = {};
    for (const [index, name] of ["a", "b", "c", "d"].entries())
      subtrees[name] = await trees.write({ version: 1, entries: [dir("inner", leaf, index)] });
    const root = await trees.write({
      version: 1,
      entries: ["a", "b", "c", "d"].map((name) => dir(name, subtrees[name] as string)),
    });
    const changes = createChangeLookahead(changesOf(["a/inner/x", "c/inner/y", "d/z"]));
    await changes.peek();
    const reader = createOldTreeReader(trees, changes);
    await reader.open("", root);
    // The root's read started the reads of a, c and d, but not of b, where nothing changed.
    const key = (hash: string) => `snapshots/${"a".repeat(32)}/trees/${hash}`;
    expect(reads.slice(0, 4)).toEqual([
      key(root),
      key(subtrees.a as string),
      key(subtrees.c as string),
      key(subtrees.d as string),
    ]);
    const a = await reader.open("a", subtrees.a as string);
    expect(a.entries?.map((entry) => entry.name)).toEqual(["inner"]);
    // The walk takes a's change before it opens c.
    changes.take();
    const c = await reader.open("c", subtrees.c as string);
    expect(c.entries?.length).toBe(1);
    // a/inner and c/inner were read ahead too (once each, the leaf being one tree); a and c were not read again.
    for (const name of ["a", "c"])
      expect(reads.filter((read) => read === key(subtrees[name] as string))).toHaveLength(1);
    expect(reads.filter((read) => read === key(subtrees.b as string))).toEqual([]);
  });
});
