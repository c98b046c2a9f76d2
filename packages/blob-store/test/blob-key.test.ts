import { describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import {
  MAX_BLOB_KEY_BYTES,
  compareBlobKeys,
  validateBlobKey,
  validateBlobPrefix,
} from "../src/index.js";
import { utf8Length } from "../src/blob-key.js";

describe("validateBlobKey", () => {
  it("returns a valid key unchanged, up to the byte limit", () => {
    expect(validateBlobKey("a/b.c/..d/.e")).toBe("a/b.c/..d/.e");
    expect(validateBlobKey("é".repeat(MAX_BLOB_KEY_BYTES / 2))).toHaveLength(
      MAX_BLOB_KEY_BYTES / 2,
    );
  });

  it("names the rule a key breaks and keeps at most a bounded slice of the key", () => {
    const cases: [unknown, RegExp][] = [
      ["", /empty/],
      ["/a", /start with '\/'/],
      ["a//b", /empty segment/],
      ["a/..", /'\.\.' segment/],
      ["é".repeat(MAX_BLOB_KEY_BYTES / 2 + 1), /at most 1024 UTF-8 bytes/],
      [null, /must be a string/],
    ];
    for (const [key, reason] of cases) {
      let caught: unknown;
      try {
        validateBlobKey(key);
      } catch (error) {
        caught = error;
      }
      expect(ManagedRuntimeError.hasCode(caught, "invalid_request")).toBe(true);
      expect((caught as Error).message).toMatch(reason);
      expect(String((caught as ManagedRuntimeError).context.key ?? "").length).toBeLessThanOrEqual(
        200,
      );
    }
  });

  it("accepts prefixes that are not whole keys but keeps the text rules", () => {
    expect(validateBlobPrefix("a/")).toBe("a/");
    expect(validateBlobPrefix("a/.")).toBe("a/.");
    expect(() => validateBlobPrefix("/a")).toThrow(/start with/);
  });
});

describe("compareBlobKeys and utf8Length", () => {
  it("order keys as their UTF-8 bytes do, and count UTF-8 bytes", () => {
    const alphabet = ["a", "/", "-", "0", "é", "\uffee", "😀", "\u0800", "z"];
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = (): string => alphabet[Math.floor(random() * alphabet.length)] ?? "a";
    const keys = Array.from({ length: 300 }, () =>
      Array.from({ length: 1 + Math.floor(random() * 5) }, pick).join(""),
    );
    const byBytes = [...keys].sort((left, right) =>
      Buffer.compare(Buffer.from(left), Buffer.from(right)),
    );
    expect([...keys].sort(compareBlobKeys)).toEqual(byBytes);
    for (const key of keys) expect(utf8Length(key)).toBe(Buffer.byteLength(key));
  });
});
