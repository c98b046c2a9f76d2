import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  NO_STORED_CONTENTS,
  createStoredContentsBuilder,
} from "../src/checkpoint/stored-contents.js";

const sha = (index: number) => createHash("sha256").update(String(index)).digest("hex");

describe("stored contents", () => {
  it("finds every added content with its location, the first of repeated digests winning, and nothing else", () => {
    const packs = [
      { sha256: "a".repeat(64), size: 100 },
      { sha256: "b".repeat(64), size: 200 },
    ];
    const builder = createStoredContentsBuilder();
    // More than the first allocation, so growing is exercised too.
    for (let index = 0; index < 5000; index += 1)
      builder.add(
        sha(index),
        index % 3 === 0
          ? null
          : { pack: packs[index % 2] as (typeof packs)[number], offset: index },
      );
    builder.add(sha(1), null);
    const stored = builder.build();
    expect(stored.size).toBe(5000);
    for (let index = 0; index < 5000; index += 1) {
      const found = stored.get(sha(index));
      if (index % 3 === 0) expect(found).toBeNull();
      else expect(found).toEqual({ pack: packs[index % 2], offset: index });
    }
    for (let index = 5000; index < 5100; index += 1) expect(stored.get(sha(index))).toBeUndefined();
    expect(stored.get("not a digest")).toBeUndefined();
    expect(NO_STORED_CONTENTS.get(sha(1))).toBeUndefined();
    expect(createStoredContentsBuilder().build().get(sha(1))).toBeUndefined();
  });

  it("tells apart digests that share their first bytes", () => {
    const builder = createStoredContentsBuilder();
    const digests = ["c", "a", "e", "b"].map((tail) => `00000000${tail.repeat(56)}`);
    for (const [index, digest] of digests.entries())
      builder.add(
        digest,
        index === 2 ? null : { pack: { sha256: "f".repeat(64), size: 10 }, offset: index },
      );
    const stored = builder.build();
    for (const [index, digest] of digests.entries())
      expect(stored.get(digest)).toEqual(
        index === 2 ? null : { pack: { sha256: "f".repeat(64), size: 10 }, offset: index },
      );
    expect(stored.get(`00000000${"d".repeat(56)}`)).toBeUndefined();
    expect(stored.get(`ffffffff${"d".repeat(56)}`)).toBeUndefined();
  });

  it("keeps offsets beyond 32 bits, answers the same set when built twice and takes nothing after", () => {
    const pack = { sha256: "d".repeat(64), size: 2 ** 40 };
    const builder = createStoredContentsBuilder();
    builder.add(sha(1), { pack, offset: 2 ** 33 + 5 });
    builder.add(sha(2), { pack, offset: 0xffffffff });
    builder.add(sha(3), { pack, offset: 0xfffffffe });
    const stored = builder.build();
    expect(stored.get(sha(1))).toEqual({ pack, offset: 2 ** 33 + 5 });
    expect(stored.get(sha(2))).toEqual({ pack, offset: 0xffffffff });
    expect(stored.get(sha(3))).toEqual({ pack, offset: 0xfffffffe });
    expect(builder.build()).toBe(stored);
    expect(() => builder.add(sha(4), null)).toThrow(/after build/);
  });
});
