import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // `tsc --noEmit` (the typecheck script) already compiles src and test, *.test-d.ts included;
    // a second pass here would double the slowest step of the run.
    typecheck: { enabled: false },
    // Cases talk to an s3rver child process or workerd on a shared machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
