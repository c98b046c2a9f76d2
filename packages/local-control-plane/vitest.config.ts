import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // `tsc --noEmit` (the typecheck script) already compiles src and test, *.test-d.ts included.
    typecheck: { enabled: false },
    // Cases run the SDK's worker, which spawns bash, on a shared machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
