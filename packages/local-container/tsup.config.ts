import { defineConfig } from "tsup";
import { libraryConfig } from "../../tsup.base.js";

export default defineConfig([
  libraryConfig({ index: "src/index.ts", testing: "src/testing/index.ts" }, { platform: "node", clean: false }),
  // Workers module: the real `@cloudflare/containers` is bundled in, so aliasing that name to this
  // file cannot loop back to itself.
  libraryConfig(
    { "containers-shim": "src/shim/containers-shim.ts" },
    { platform: "neutral", noExternal: ["@cloudflare/containers"], external: ["cloudflare:workers"], clean: false },
  ),
]);
