import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // `tsc --noEmit` (the typecheck script) already compiles src and test.
    typecheck: { enabled: false },
    // Cases run the official SDK against a local HTTP server on a shared machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
