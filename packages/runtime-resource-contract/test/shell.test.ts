import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellQuote } from "../src/index.js";

describe("shellQuote", () => {
  it.each([
    "plain",
    "",
    "with space",
    "it's",
    "'''",
    '$HOME `id` $(id) \\ " ; | & * ?',
    "new\nline",
    "ünï ✓",
  ])("gives %j back unchanged through sh", (value) => {
    expect(
      execFileSync("sh", ["-c", `printf '%s' ${shellQuote(value)}`], { encoding: "utf8" }),
    ).toBe(value);
  });

  it("writes one single-quoted word", () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});
