import { describe, expect, it } from "vitest";
import {
  MAX_USAGE_SECONDS_PER_EMIT,
  activeSeconds,
  hasEnvironmentPackages,
  usageRecordSchema,
} from "../src/index.js";

const record = {
  kind: "sandbox_active_seconds",
  value: 61,
  provider: "cloudflare",
  runtimeId: "oma-1",
  scope: { workspaceId: "w", environmentId: "e", sessionId: "s", workId: "k" },
  instanceType: "standard-1",
  startedAt: "2026-11-01T00:00:00.000Z",
  stoppedAt: "2026-11-01T00:01:01.900Z",
};

describe("usage records", () => {
  it("counts whole seconds, never negative, clamped to 24 hours", () => {
    expect(activeSeconds(0, 61_900)).toBe(61);
    expect(activeSeconds(5_000, 1_000)).toBe(0);
    expect(activeSeconds(0, 3 * 86_400_000)).toBe(MAX_USAGE_SECONDS_PER_EMIT);
    expect(MAX_USAGE_SECONDS_PER_EMIT).toBe(86_400);
  });

  it("accepts a measured span and refuses fractions, overlong values, unknown kinds and extra fields", () => {
    expect(usageRecordSchema.parse(record)).toEqual(record);
    for (const bad of [
      { ...record, value: 1.5 },
      { ...record, value: 86_401 },
      { ...record, kind: "browser_guess_seconds" },
      { ...record, stoppedAt: "yesterday" },
      { ...record, token: "fence-token" },
    ]) {
      expect(usageRecordSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it("knows when an environment lists packages", () => {
    expect(hasEnvironmentPackages(undefined)).toBe(false);
    expect(hasEnvironmentPackages({ pip: [], npm: [] })).toBe(false);
    expect(hasEnvironmentPackages({ gem: ["rake"] })).toBe(true);
  });
});
