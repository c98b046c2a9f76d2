import { defineConfig } from "vitest/config";
import { shellTextVitePlugin } from "../../scripts/program-text.mjs";

export default defineConfig({
  // Programs run in a sandbox are `.sh` files, imported as text (as the build's loader does).
  plugins: [shellTextVitePlugin()],
  test: {
    include: ["test/*.test.ts"],
  },
});
