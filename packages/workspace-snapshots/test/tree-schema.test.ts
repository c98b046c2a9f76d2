import { describe, expect, it } from "vitest";
import { treeSchema } from "../src/objects.js";

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
