/** workerd, started by the launcher, gets a named environment, not the launching process's keys. */
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The built package: the launcher's workerd wrapper exists only next to the build.
const { startLocalBridge } = (await import(
  new URL("../dist/index.js", import.meta.url).href
)) as typeof import("../src/index.js");

/** Pids of this process's descendants whose command line names `name`. */
function descendantsNamed(name: string): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((candidate) => /^\d+$/.test(candidate))) {
    try {
      parents.set(
        Number(entry),
        Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1]),
      );
    } catch {
      // Gone meanwhile.
    }
  }
  const descends = (pid: number): boolean => {
    for (
      let current = parents.get(pid);
      current !== undefined && current > 1;
      current = parents.get(current)
    )
      if (current === process.pid) return true;
    return false;
  };
  return [...parents.keys()].filter((pid) => {
    try {
      return descends(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(name);
    } catch {
      return false;
    }
  });
}

describe("host children of the local stack", () => {
  it("start workerd with only the variables it needs, never a key of the launching process", async () => {
    const sentinel = `sk-test-${randomBytes(16).toString("hex")}`;
    process.env.ANTHROPIC_API_KEY = sentinel;
    process.env.OMA_TEST_ENVIRONMENT_KEY = sentinel;
    const bridge = await startLocalBridge();
    try {
      const [workerd] = descendantsNamed("workerd");
      expect(workerd).toBeDefined();
      const environ = readFileSync(`/proc/${workerd}/environ`, "utf8");
      expect(environ).not.toContain(sentinel);
      const names = environ
        .split("\0")
        .filter(Boolean)
        .map((entry) => entry.slice(0, entry.indexOf("=")));
      for (const name of names)
        expect([
          "PATH",
          "HOME",
          "TMPDIR",
          "LANG",
          "FORCE_COLOR",
          "TZ",
          "SSL_CERT_FILE",
          "SSL_CERT_DIR",
        ]).toContain(name);
    } finally {
      await bridge.stop();
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.OMA_TEST_ENVIRONMENT_KEY;
    }
  }, 120_000);
});
