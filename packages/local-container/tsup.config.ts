import { defineConfig } from "tsup";

export default defineConfig([
  {
    entry: { index: "src/index.ts", testing: "src/testing/index.ts" },
    format: ["esm"],
    platform: "node",
    dts: true,
    sourcemap: true,
    target: "es2022",
  },
  {
    // Workers module: the real `@cloudflare/containers` is bundled in, so aliasing that name to this
    // file cannot loop back to itself.
    entry: { "containers-shim": "src/shim/containers-shim.ts" },
    format: ["esm"],
    platform: "neutral",
    noExternal: ["@cloudflare/containers"],
    external: ["cloudflare:workers"],
    dts: true,
    sourcemap: true,
    target: "es2022",
  },
]);
