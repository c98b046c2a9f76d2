import { build } from "esbuild";
import { defineConfig } from "vitest/config";
import { programTextVitePlugin, shellTextVitePlugin } from "../../scripts/program-text.mjs";

export default defineConfig({
  // Programs run in a container are files of their own, imported as text as the build does: `.sh` as it
  // is, and a `?program` import bundled into one CommonJS program.
  plugins: [shellTextVitePlugin(), programTextVitePlugin(build)],
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Each file starts its own servers on free ports; workerd and process spawning dominate the run time.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
