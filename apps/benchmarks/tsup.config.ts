import { defineConfig } from "tsup";

// Each benchmark and the child process it spawns next to it; workspace packages run from their own builds.
export default defineConfig({
  entry: {
    "load.bench": "bench/load/load.bench.ts",
    "load-child": "bench/load/load-child.ts",
    "bridge.bench": "bench/bridge/bridge.bench.ts",
    "worker.bench": "bench/worker/worker.bench.ts",
    "service.bench": "bench/service/service.bench.ts",
    "soak.bench": "bench/service/soak.bench.ts",
    "soak-stack": "bench/service/soak-stack.ts",
  },
  outDir: "dist",
  format: ["esm"],
  platform: "node",
  target: "es2022",
  clean: true,
  sourcemap: true,
  splitting: true,
  skipNodeModulesBundle: true,
});
