import { defineConfig } from "vitest/config";

// Type tests are `tsc --noEmit` (the typecheck script); the workerd case starts Miniflare, slow on a busy machine.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: { enabled: false },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
