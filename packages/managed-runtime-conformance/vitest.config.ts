import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    // The reference driver runs local processes with no isolation boundary and loads only under NODE_ENV=test.
    env: { NODE_ENV: "test" },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
