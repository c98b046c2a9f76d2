import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Each file starts its own servers on free ports; workerd and process spawning dominate the run time.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
