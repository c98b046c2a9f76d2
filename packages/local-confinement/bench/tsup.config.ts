import { defineConfig } from "tsup";
import { programTextEsbuildPlugin } from "../../../scripts/program-text.mjs";

// The benchmark runs the confinement from its sources, with its programs inlined as the package build does.
export default defineConfig({
  entry: { "confinement.bench": "bench/confinement.bench.ts" },
  format: ["esm"],
  target: "es2022",
  platform: "node",
  outDir: "node_modules/.bench",
  silent: true,
  loader: { ".sh": "text" },
  esbuildPlugins: [programTextEsbuildPlugin()],
});
