import { defineConfig } from "tsup";
import { shellTextTsupOptions } from "../../scripts/program-text.mjs";

// Bundles the bench with the driver's sources, so it reaches internals the public entry does not export.
// The benchmarks that run the driver with the local stack or the host live in apps/benchmarks.
export default defineConfig({
  entry: { "driver-child": "bench/driver-child.ts" },
  outDir: "bench/dist",
  format: ["esm"],
  platform: "node",
  target: "es2022",
  clean: true,
  sourcemap: true,
  splitting: true,
  // Workspace packages (the local stack among them) run from their own builds.
  skipNodeModulesBundle: true,
  ...shellTextTsupOptions(),
});
