import { defineConfig } from "vitest/config";
import { shellTextVitePlugin } from "../../scripts/program-text.mjs";

export default defineConfig({
  // Programs run in a sandbox are `.sh` files, imported as strings (as the build's loader does).
  plugins: [shellTextVitePlugin()],
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Property tests run dozens of seeds and the local stack shares the machine with other runs: a case is
    // judged by what it asserts, and a deadline only catches a hang.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    globalSetup: ["../../vitest.temporary-folder.ts"],
    // The local stack's file writes land full-length first and are filled this much later, as on Cloudflare
    // with a wider window: checkpoints and restores are tested where waiting for a size reads zeros.
    env: { OMA_LOCAL_CONTAINER_WRITE_FILL_DELAY_MS: "10" },
  },
});
