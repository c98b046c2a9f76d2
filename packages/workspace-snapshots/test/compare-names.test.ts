import { describe, expect, it } from "vitest";
import { compareNames } from "../src/objects.js";

describe("compareNames", () => {
  it("orders names as their UTF-8 bytes followed by `/`, beyond the BMP too", () => {
    const names = ["a", "a-b", "a b", "\t", "ä", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff"];
    names.push("\u{1f600}", "z", ".dot", "-dash", "a.b");
    // A name that starts another: the longer one's next character below `/`, at it, or above it.
    names.push(
      "a.",
      "a-",
      "a!",
      "a\u001f",
      "a0",
      "aa",
      "a\u00e4",
      "a\ue000",
      "a\u{1f600}",
      "a\u{1f601}",
    );
    // Surrogate pairs that share their first unit, U+E000 and above against pairs, a lone surrogate.
    names.push(
      "\u{1f601}",
      "\u{10000}",
      "\u{10ffff}",
      "\ue000\u{1f600}",
      "\uffffz",
      "\ud800",
      "x\udc00",
    );
    for (const left of names)
      for (const right of names) {
        const bytes = Buffer.compare(Buffer.from(`${left}/`), Buffer.from(`${right}/`));
        expect([left, right, Math.sign(compareNames(left, right))]).toEqual([left, right, bytes]);
      }
  });
});
