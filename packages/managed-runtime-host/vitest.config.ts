import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    // The Postgres server first: it picks its folder before the run's own temporary folder becomes TMPDIR.
    globalSetup: ["../../vitest.postgres.ts", "../../vitest.temporary-folder.ts"],
  },
});
