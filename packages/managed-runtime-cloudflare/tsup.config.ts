import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", sdk: "src/sdk.ts", worker: "src/worker.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
});
