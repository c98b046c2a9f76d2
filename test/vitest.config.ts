import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packaging/**/*.test.ts", "meta/**/*.test.ts"],
    // Packing and installing every package happens once in beforeAll; it reads the shared pnpm store.
    hookTimeout: 80_000,
    testTimeout: 30_000,
    globalSetup: ["../vitest.temporary-folder.ts"],
  },
});
