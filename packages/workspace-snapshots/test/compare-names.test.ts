import { describe, expect, it } from "vitest";
import { compareNames } from "../src/objects.js";

describe("compareNames", () => {
  it("orders names as their UTF-8 bytes followed by `/`, beyond the BMP too", () => {
    const names = ["a", "a-b", "a b", "\t", "ä", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff"];
    names.push("\u{1f600}", "z", ".dot", "-dash", "a.b");
    for (const left of names)
      for (const right of names) {
        const bytes = Buffer.compare(Buffer.from(`${left}/`), Buffer.from(`${right}/`));
        expect([left, right, Math.sign(compareNames(left, right))]).toEqual([left, right, bytes]);
      }
  });
});
