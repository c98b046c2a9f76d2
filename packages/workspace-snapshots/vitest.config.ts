import { defineConfig } from "vitest/config";
import { shellTextVitePlugin } from "../../scripts/program-text.mjs";

export default defineConfig({
  // Programs run in a sandbox are `.sh` files, imported as text (as the build's loader does).
  plugins: [shellTextVitePlugin()],
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Temporary files go to a folder of the run's own, removed when the run ends.
    globalSetup: ["../../vitest.temporary-folder.ts"],
    // Chains of snapshots run real shells and GNU tar on a shared machine: a deadline only catches a hang.
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
