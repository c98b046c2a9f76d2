import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Temporary files go to a folder of the run's own, removed when the run ends.
    globalSetup: ["../../vitest.temporary-folder.ts"],
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    // Tests drive real filesystems and GNU tar; a shared CI machine can be slow, never wrong.
    testTimeout: 60_000,
  },
});
