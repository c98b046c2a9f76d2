import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Property tests run dozens of seeds and the local stack shares the machine with other runs: a case is
    // judged by what it asserts, and a deadline only catches a hang.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
