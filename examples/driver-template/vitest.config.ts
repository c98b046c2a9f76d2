import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The local-subprocess provider runs commands as plain local processes (no isolation boundary)
    // and refuses to start outside NODE_ENV=test.
    env: { NODE_ENV: "test" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
