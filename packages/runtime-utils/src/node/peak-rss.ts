import { readFileSync } from "node:fs";

/**
 * This process's own peak resident set, in bytes: `VmHWM` from /proc/self/status, the high-water mark of its
 * address space since exec. `resourceUsage().maxRSS` is not that on Linux: it also keeps the peak of the
 * address space before exec, the copy of the parent's memory a spawned child starts as, so a large parent
 * (the benchmark itself) showed up as the child's peak. Falls back to maxRSS where /proc is absent.
 */
export function ownPeakRssBytes(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // No /proc: the fallback below.
  }
  return process.resourceUsage().maxRSS * 1024;
}
