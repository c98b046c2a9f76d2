import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    // Cases talk to an s3rver child process or workerd on a shared machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
