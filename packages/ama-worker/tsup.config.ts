import { defineConfig } from "tsup";
import { libraryConfig } from "../../tsup.base.js";

export default defineConfig([
  libraryConfig({ index: "src/index.ts" }, { clean: false }),
  {
    // The bin is one self-contained file (the SDK inlined), so a sandbox image or a confined local
    // runtime needs only Node and this file on PATH: no node_modules inside the sandbox.
    entry: { "oma-ama-worker": "src/bin.ts" },
    outDir: "dist/bin",
    splitting: false,
    format: ["esm"],
    platform: "node",
    target: "node20",
    noExternal: [/.*/],
    banner: { js: "import { createRequire as __omaCreateRequire } from 'node:module'; const require = __omaCreateRequire(import.meta.url);" },
    sourcemap: false,
    clean: false,
  },
]);
