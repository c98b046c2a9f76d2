import { defineConfig } from "vitest/config";

/** Checks of the deployable artefacts that run in Node: Dockerfile, wrangler.jsonc, migrations. */
export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    // deploy:check and certify share one generated config file next to wrangler.jsonc.
    fileParallelism: false,
    testTimeout: 30_000,
  },
});
