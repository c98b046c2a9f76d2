import { describe, expect, it } from "vitest";
import { jitteredBackoffMs } from "../src/index.js";

describe("jitteredBackoffMs", () => {
  it("doubles from baseMs up to maxMs without jitter", () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) =>
      jitteredBackoffMs({ attempt, baseMs: 100, maxMs: 1_000, jitter: 0 }),
    );
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("removes up to `jitter` of the delay at random", () => {
    expect(
      jitteredBackoffMs({ attempt: 2, baseMs: 100, maxMs: 1_000, jitter: 0.5, random: () => 0.5 }),
    ).toBe(300);
    expect(
      jitteredBackoffMs({ attempt: 2, baseMs: 100, maxMs: 1_000, jitter: 1, random: () => 0.99 }),
    ).toBe(4);
    expect(
      jitteredBackoffMs({ attempt: 2, baseMs: 100, maxMs: 1_000, jitter: 1, random: () => 0 }),
    ).toBe(400);
  });

  it("stays within [ceiling · (1 − jitter), ceiling] for any random draw", () => {
    for (let index = 0; index < 1_000; index++) {
      const delay = jitteredBackoffMs({ attempt: index % 8, baseMs: 10, maxMs: 500, jitter: 0.2 });
      const ceiling = Math.min(500, 10 * 2 ** (index % 8));
      expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling * 0.8));
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
