import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeObject, parseTree } from "../src/objects.js";
import { treeSchema } from "./tree-schema.js";

const HASH = "a".repeat(64);
const file = { name: "f", type: "file", mode: 0o644, mtime: "1700000000.000000000" };
const dir = { name: "d", type: "dir", mode: 0o755, mtime: "1700000000.000000000", tree: HASH };
const parses = (entries: unknown[]) => treeSchema.safeParse({ version: 1, entries }).success;

describe("a tree's file entries", () => {
  it("hold a hash exactly when they have bytes, and a pack with its offset", () => {
    expect(parses([dir, { ...file, size: 0 }, { ...file, name: "g", size: 3, hash: HASH }])).toBe(
      true,
    );
    expect(parses([{ ...file, size: 3, hash: HASH, pack: "b".repeat(32), offset: 0 }])).toBe(true);
    expect(parses([dir, { ...file, size: 3 }])).toBe(false);
    expect(parses([{ ...file, size: 0, hash: HASH }])).toBe(false);
    expect(parses([{ ...file, size: 3, hash: HASH, pack: "b".repeat(32) }])).toBe(false);
    expect(parses([{ ...file, size: 3, hash: HASH, offset: 0 }])).toBe(false);
  });
});

const MTIME = "1700000000.123456789";
const validEntries: Record<string, unknown>[] = [
  { name: "empty", type: "file", mode: 0o644, mtime: MTIME, size: 0 },
  { name: "blob", type: "file", mode: 0o755, mtime: MTIME, size: 300_000, hash: HASH },
  {
    name: "packed",
    type: "file",
    mode: 0o600,
    mtime: MTIME,
    size: 3,
    hash: HASH,
    pack: "b".repeat(32),
    offset: 9,
  },
  { name: "linked", type: "file", mode: 0o644, mtime: "-5.000000000", size: 0, link: "12" },
  { name: "dir", type: "dir", mode: 0o1777, mtime: MTIME, tree: HASH },
  { name: "link", type: "symlink", mtime: MTIME, target: "../x" },
];
/** Values each field is tried with, valid for some entries and not for others; `undefined` drops the field. */
const tries: Record<string, unknown[]> = {
  name: ["a", "...", " ", "é", "\u{1f600}", "", ".", "..", "a/b", "a\0b", 5, null, undefined],
  type: ["file", "dir", "symlink", "fifo", "File", null, undefined],
  mode: [0, 0o644, 0o1777, 0o4755, 0o2755, 0o10644, -1, 1.5, "644", 2 ** 53, null, undefined],
  mtime: [
    MTIME,
    "0.000000000",
    "-1.000000000",
    "123456789012.000000000",
    "1234567890123.000000000",
    "1.00000000",
    "1.0000000000",
    "1",
    " 1.000000000",
    "1.000000000\n",
    "1,000000000",
    1,
    undefined,
  ],
  size: [0, 3, 2 ** 53 - 1, 2 ** 53, -1, 1.5, "3", null, undefined],
  hash: [HASH, "A".repeat(64), "a".repeat(63), "a".repeat(65), "g".repeat(64), null, 1, undefined],
  pack: ["b".repeat(32), "b".repeat(31), "B".repeat(32), HASH, null, undefined],
  offset: [0, 9, 2 ** 53 - 1, 2 ** 53, -1, 0.5, "0", null, undefined],
  link: ["0", "12", "1".repeat(20), "1".repeat(21), "", "1a", "-1", 12, null, undefined],
  tree: [HASH, "a".repeat(63), "A".repeat(64), null, undefined],
  target: ["x", "../x", "a/b/c", "", 1, null, undefined],
  extra: [1, undefined],
};
const variants = (entry: Record<string, unknown>) =>
  Object.entries(tries).flatMap(([field, values]) =>
    values.map((value) => {
      const copy: Record<string, unknown> = { ...entry, [field]: value };
      if (value === undefined) delete copy[field];
      return copy;
    }),
  );
/** Trees as stored bytes parse: through JSON, so no `undefined` is left anywhere. */
const asStored = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const reordered = (entry: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(entry).reverse());
const trees: unknown[] = [
  { version: 1, entries: [] },
  { version: 1, entries: validEntries },
  { version: 1, entries: validEntries.map(reordered) },
  ...validEntries
    .flatMap(variants)
    .map((entry) => ({ version: 1, entries: [validEntries[0], entry] })),
  ...validEntries
    .flatMap((entry) => variants(reordered(entry)))
    .map((entry) => ({ version: 1, entries: [entry] })),
  { version: 1, chunks: [HASH, HASH] },
  { version: 1, chunks: [HASH, HASH, "c".repeat(64)] },
  { version: 1, chunks: [HASH] },
  { version: 1, chunks: [] },
  { version: 1, chunks: [HASH, "a".repeat(63)] },
  { version: 1, chunks: [HASH, 5] },
  { version: 1, chunks: "x" },
  { version: 1, chunks: [HASH, HASH], entries: [] },
  { version: 1, chunks: [HASH, HASH], extra: 1 },
  { version: 1, entries: [], extra: 1 },
  { version: 1, entries: {} },
  { version: 1, entries: [null] },
  { version: 1, entries: [[]] },
  { version: 1, entries: ["file"] },
  { version: 2, entries: [] },
  { version: "1", entries: [] },
  { entries: [] },
  { version: 1 },
  {},
  [],
  null,
  "tree",
  1,
].map(asStored);
// Own keys that JSON can hold but an object literal cannot.
trees.push(JSON.parse('{"version":1,"entries":[],"__proto__":{}}'));
trees.push(
  JSON.parse(
    `{"version":1,"entries":[{"name":"f","type":"file","mode":420,"mtime":"${MTIME}","size":0,"__proto__":1}]}`,
  ),
);

describe("parseTree, the check a reader runs", () => {
  it("agrees with treeSchema on every field rule, and returns what it returns", () => {
    let accepted = 0;
    for (const tree of trees) {
      const zod = treeSchema.safeParse(structuredClone(tree));
      const own = parseTree(structuredClone(tree));
      expect([tree, own !== undefined]).toEqual([tree, zod.success]);
      if (zod.success) {
        accepted += 1;
        // Key order too: a reused old entry is written again exactly as it was read.
        expect(JSON.stringify(own)).toBe(JSON.stringify(zod.data));
      }
    }
    expect(accepted).toBeGreaterThan(100);
    expect(trees.length - accepted).toBeGreaterThan(200);
  });

  it("refuses a malformed tree as malformed, and a valid one parses", () => {
    const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));
    const hashOf = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
    const good = bytes({ version: 1, entries: validEntries });
    expect(decodeObject(parseTree, good, hashOf(good), "tree")).toEqual({
      version: 1,
      entries: validEntries,
    });
    for (const bad of [
      bytes({ version: 1, entries: [{ ...validEntries[0], size: 3 }] }),
      Buffer.from("{"),
    ])
      expect(() => decodeObject(parseTree, bad, hashOf(bad), "tree")).toThrow(
        expect.objectContaining({
          code: "integrity_failed",
          message: expect.stringMatching(/is malformed$/),
        }),
      );
  });
});
