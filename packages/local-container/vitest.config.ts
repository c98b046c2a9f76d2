import { defineConfig } from "vitest/config";
import { programTextVitePlugin } from "./scripts/program-text.mjs";

export default defineConfig({
  // Programs run in a container are files of their own, imported as text as the build does: `.sh` as it
  // is, and a `?program` import bundled into one CommonJS program.
  plugins: [
    { name: "shell-text", transform: (code, id) => (id.endsWith(".sh") ? { code: `export default ${JSON.stringify(code)};`, map: null } : null) },
    programTextVitePlugin(),
  ],
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Each file starts its own servers on free ports; workerd and process spawning dominate the run time.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["../../vitest.temporary-folder.ts"],
  },
});
