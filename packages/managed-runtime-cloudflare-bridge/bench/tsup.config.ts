import { defineConfig } from "tsup";

// Bundles the bench with the driver's sources, so it reaches internals the public entry does not export.
export default defineConfig({
  entry: { "bridge.bench": "bench/bridge.bench.ts", "driver-child": "bench/driver-child.ts", "load.bench": "bench/load.bench.ts", "load-child": "bench/load-child.ts" },
  outDir: "bench/dist",
  format: ["esm"],
  platform: "node",
  target: "es2022",
  clean: true,
  sourcemap: true,
  splitting: true,
  // Workspace packages (the local stack among them) run from their own builds.
  skipNodeModulesBundle: true,
  loader: { ".sh": "text" },
});
