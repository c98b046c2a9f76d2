import { defineConfig, type Options } from "tsup";
import { libraryConfig } from "../../tsup.base.js";

/**
 * The bin is one self-contained file (the SDK inlined), so a sandbox image or a confined local runtime needs
 * only Node and this file on PATH: no node_modules inside the sandbox.
 */
const binConfig: Options = {
  entry: { "oma-ama-worker": "src/bin.ts" },
  outDir: "dist/bin",
  splitting: false,
  format: ["esm"],
  platform: "node",
  target: "node20",
  noExternal: [/.*/],
  banner: {
    js: "import { createRequire as __omaCreateRequire } from 'node:module'; const require = __omaCreateRequire(import.meta.url);",
  },
  sourcemap: false,
  clean: false,
};

export default defineConfig([
  libraryConfig({ index: "src/index.ts" }, { clean: false }),
  binConfig,
  {
    // For the tests' SDK matrix only (scripts/sdk-matrix): the package again, bin included, with the newest SDK
    // inlined in place of the declared one. Outside dist, so it is never published.
    ...binConfig,
    entry: { index: "src/index.ts", "bin/oma-ama-worker": "src/bin.ts" },
    outDir: "sdk-newest",
    esbuildOptions(options) {
      options.alias = { "@anthropic-ai/sdk": "@anthropic-ai/sdk-newest" };
    },
  },
]);
