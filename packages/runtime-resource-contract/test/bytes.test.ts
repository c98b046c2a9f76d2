import { describe, expect, it } from "vitest";
import { concatBytes } from "../src/index.js";

describe("concatBytes", () => {
  it("joins chunks in order and returns a lone chunk as it is", () => {
    expect([...concatBytes([Uint8Array.of(1, 2), Uint8Array.of(), Uint8Array.of(3)])]).toEqual([
      1, 2, 3,
    ]);
    const lone = Uint8Array.of(9);
    expect(concatBytes([lone])).toBe(lone);
    expect(concatBytes([]).byteLength).toBe(0);
  });
});
