import { describe, expect, it } from "vitest";
import { stableJson } from "../src/index.js";

describe("stableJson", () => {
  it("sorts keys at every depth, so key order never changes the text", () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(stableJson({ x: 1, y: 2 })).toBe(stableJson({ y: 2, x: 1 }));
  });

  it("drops undefined members as JSON.stringify does and refuses circular values", () => {
    expect(stableJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => stableJson(circular)).toThrow(TypeError);
  });
});
