import { describe, expect, it } from "vitest";
import { createExcludeMatcher } from "../src/exclude-matcher.js";

describe("createExcludeMatcher", () => {
  const cases: [string, string, boolean, boolean][] = [
    ["*.log", "a.log", false, true],
    ["*.log", "deep/dir/a.log", false, true],
    ["*.log", "a.log.txt", false, false],
    ["node_modules", "pkg/node_modules", true, true],
    ["src/*.ts", "src/a.ts", false, true],
    ["src/*.ts", "src/deep/a.ts", false, false],
    ["src/**/*.ts", "src/deep/er/a.ts", false, true],
    ["src/**/*.ts", "src/a.ts", false, true],
    ["/dist", "dist", true, true],
    ["/dist", "pkg/dist", true, false],
    ["./dist", "dist", true, true],
    ["cache/", "cache", false, false],
    ["cache/", "x/cache", true, true],
    ["file?.txt", "file1.txt", false, true],
    ["file?.txt", "file10.txt", false, false],
    ["[ab].txt", "b.txt", false, true],
    ["[!ab].txt", "b.txt", false, false],
    ["a+b (1).txt", "a+b (1).txt", false, true],
    ["a+b (1).txt", "aab (1).txt", false, false],
  ];
  for (const [pattern, path, isDirectory, expected] of cases) {
    it(`${pattern} ${expected ? "matches" : "does not match"} ${path}`, () => {
      expect(createExcludeMatcher([pattern])(path, isDirectory)).toBe(expected);
    });
  }

  it("matches nothing without patterns", () => {
    expect(createExcludeMatcher([])("anything", false)).toBe(false);
  });
});
