import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ownPeakRssBytes } from "../src/node.js";

describe("ownPeakRssBytes", () => {
  it("is this process's high-water mark: at least its resident set now, and what /proc/self/status says", () => {
    const peak = ownPeakRssBytes();
    expect(peak).toBeGreaterThanOrEqual(process.memoryUsage().rss);
    const status = readFileSync("/proc/self/status", "utf8");
    const after = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
    expect(peak).toBeLessThanOrEqual(after);
  });
});
