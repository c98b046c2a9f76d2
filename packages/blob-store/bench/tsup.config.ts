import { defineConfig } from "tsup";

// Bundles the bench with the store's sources; each measured upload runs in its own child process.
export default defineConfig({
  entry: { "s3.bench": "bench/s3.bench.ts", "upload-child": "bench/upload-child.ts" },
  outDir: "bench/dist",
  format: ["esm"],
  platform: "node",
  target: "es2022",
  clean: true,
  splitting: true,
  skipNodeModulesBundle: true,
});
