import { describe, expect, it } from "vitest";
import {
  functionSchema,
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
} from "../src/index.js";

describe("shared schemas", () => {
  it("positiveSafeIntegerSchema takes whole numbers from 1 to MAX_SAFE_INTEGER", () => {
    for (const value of [1, 30_000, Number.MAX_SAFE_INTEGER])
      expect(positiveSafeIntegerSchema.safeParse(value).success, String(value)).toBe(true);
    for (const value of [
      0,
      -1,
      1.5,
      Number.MAX_SAFE_INTEGER + 1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "1",
    ]) {
      expect(positiveSafeIntegerSchema.safeParse(value).success, String(value)).toBe(false);
    }
  });

  it("nonNegativeSafeIntegerSchema also takes 0", () => {
    expect(nonNegativeSafeIntegerSchema.safeParse(0).success).toBe(true);
    expect(nonNegativeSafeIntegerSchema.safeParse(-1).success).toBe(false);
    expect(nonNegativeSafeIntegerSchema.safeParse(2 ** 53).success).toBe(false);
  });

  it("functionSchema takes functions only", () => {
    expect(functionSchema().safeParse(() => undefined).success).toBe(true);
    expect(
      functionSchema<() => number>("must be a random source").safeParse({}).error?.issues[0]
        ?.message,
    ).toBe("must be a random source");
  });
});
