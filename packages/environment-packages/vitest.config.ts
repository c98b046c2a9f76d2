import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: { enabled: false },
    // Cases run real pip, npm and venv creation on a shared machine.
    testTimeout: 240_000,
    hookTimeout: 240_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
