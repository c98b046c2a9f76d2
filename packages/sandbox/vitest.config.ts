import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    typecheck: { enabled: true, include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    // Cases spawn real (confined) processes; the machine is shared with other packages' suites.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
