import { defineConfig } from "tsup";
import { libraryConfig } from "../../tsup.base.js";
import { programTextTsupOptions } from "../../scripts/program-text.mjs";

export default defineConfig([
  // Programs run in a container are files of their own, inlined as text: `.sh` as it is, and a
  // `?program` import (src/programs/) bundled into one CommonJS program.
  libraryConfig(
    { index: "src/index.ts", testing: "src/testing/index.ts" },
    { platform: "node", clean: false, ...programTextTsupOptions() },
  ),
  // Workers module: the real `@cloudflare/containers` is bundled in, so aliasing that name to this
  // file cannot loop back to itself.
  libraryConfig(
    { "containers-shim": "src/shim/containers-shim.ts" },
    {
      platform: "neutral",
      noExternal: ["@cloudflare/containers"],
      external: ["cloudflare:workers"],
      clean: false,
    },
  ),
]);
