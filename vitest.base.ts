import { defineConfig } from "vitest/config";
import { sdkMatrixAliases } from "./vitest.sdk-matrix.js";

/**
 * The test config of a package whose cases start servers, workers or the official SDK: cases in
 * `test/`, type tests left to `tsc --noEmit` (the typecheck script), `timeoutMs` per case and hook,
 * generous because the machine is shared, and temporary files in a folder of the run's own. The official SDK
 * is the one OMA_TEST_SDK names (vitest.sdk-matrix.ts).
 */
export function packageTestConfig(timeoutMs: number) {
  return defineConfig({
    resolve: { alias: sdkMatrixAliases() },
    test: {
      include: ["test/**/*.test.ts"],
      typecheck: { enabled: false },
      testTimeout: timeoutMs,
      hookTimeout: timeoutMs,
      globalSetup: ["../../vitest.temporary-folder.ts"],
    },
  });
}
