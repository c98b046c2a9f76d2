import { defineConfig } from "vitest/config";

/**
 * The test config of a package whose cases start servers, workers or the official SDK: cases in
 * `test/`, type tests left to `tsc --noEmit` (the typecheck script), `timeoutMs` per case and hook,
 * generous because the machine is shared, and temporary files in a folder of the run's own.
 */
export function packageTestConfig(timeoutMs: number) {
  return defineConfig({
    test: { include: ["test/**/*.test.ts"], typecheck: { enabled: false }, testTimeout: timeoutMs, hookTimeout: timeoutMs, globalSetup: ["../../vitest.temporary-folder.ts"] },
  });
}
