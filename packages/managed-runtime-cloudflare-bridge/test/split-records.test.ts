import { describe, expect, it } from "vitest";
import { comparePaths, pathKey, splitRecords } from "../src/checkpoint/split-records.js";

async function split(
  text: string,
  chunk: number,
  options: { maxBytes?: number; terminated?: boolean } = {},
) {
  const bytes = Buffer.from(text);
  async function* chunks() {
    for (let offset = 0; offset < bytes.byteLength; offset += chunk)
      yield bytes.subarray(offset, offset + chunk);
  }
  const records: string[] = [];
  for await (const record of splitRecords(chunks(), {
    separator: 0x0a,
    maxBytes: options.maxBytes ?? 64,
    terminated: options.terminated ?? true,
    refuse: (reason) => new Error(reason),
  })) {
    records.push(record.toString());
  }
  return records;
}

describe("splitRecords", () => {
  it("splits at every chunk boundary alike, empty records included", async () => {
    const text = "alpha\nbeta\n\ngamma delta\nü\n";
    for (let chunk = 1; chunk <= text.length + 1; chunk += 1) {
      expect(await split(text, chunk), `chunk ${chunk}`).toEqual([
        "alpha",
        "beta",
        "",
        "gamma delta",
        "ü",
      ]);
    }
  });

  it("refuses a record over maxBytes, within a chunk or across chunks, and an unterminated one", async () => {
    const long = `${"x".repeat(70)}\n`;
    for (const chunk of [3, 64, 1024])
      await expect(split(`ok\n${long}`, chunk), `chunk ${chunk}`).rejects.toThrow(
        "record too long",
      );
    await expect(split("a\nb", 1)).rejects.toThrow("unterminated record");
    expect(await split("a\nb", 1, { terminated: false })).toEqual(["a", "b"]);
  });
});

describe("comparePaths", () => {
  it("orders paths as their keys' bytes do, for ASCII and other paths alike", () => {
    const paths = [
      "a",
      "a-b",
      "a/x",
      "a/x/y",
      "a.b",
      "b",
      "ä",
      "a/ü",
      "é/x",
      "日本",
      "a0",
      "Z",
      "a b",
    ];
    const byKeys = [...paths].sort((left, right) => Buffer.compare(pathKey(left), pathKey(right)));
    expect([...paths].sort(comparePaths)).toEqual(byKeys);
    for (const left of paths)
      for (const right of paths)
        expect(Math.sign(comparePaths(left, right))).toBe(
          Math.sign(Buffer.compare(pathKey(left), pathKey(right))),
        );
  });
});
