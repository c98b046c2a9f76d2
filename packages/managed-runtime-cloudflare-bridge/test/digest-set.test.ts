import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createDigestSet } from "../src/checkpoint/digest-set.js";

const sha = (index: number) => createHash("sha256").update(String(index)).digest("hex");

describe("digest set", () => {
  it("adds each digest once, through growing, and tells a repeat", () => {
    const set = createDigestSet(4);
    for (let index = 0; index < 20_000; index += 1) expect(set.add(sha(index))).toBe(true);
    expect(set.size).toBe(20_000);
    for (let index = 0; index < 20_000; index += 7) expect(set.add(sha(index))).toBe(false);
    expect(set.size).toBe(20_000);
    expect(set.add(sha(20_000))).toBe(true);
  });

  it("tells apart digests that land in the same slot", () => {
    const set = createDigestSet(8);
    const digests = ["c", "a", "e", "b"].map((tail) => `00000000${tail.repeat(56)}`);
    for (const digest of digests) expect(set.add(digest)).toBe(true);
    for (const digest of digests) expect(set.add(digest)).toBe(false);
    expect(set.size).toBe(4);
  });

  it("refuses what is not a sha256 digest in hex", () => {
    const set = createDigestSet();
    expect(() => set.add("not a digest")).toThrow(TypeError);
    expect(() => set.add("z".repeat(64))).toThrow(TypeError);
    expect(set.size).toBe(0);
  });
});
