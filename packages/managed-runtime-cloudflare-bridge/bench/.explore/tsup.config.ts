import { defineConfig } from "tsup";
export default defineConfig({ entry: { "get-pattern": "bench/.explore/get-pattern.ts" }, outDir: "bench/.explore/out", format: ["esm"], platform: "node", target: "es2022", skipNodeModulesBundle: true });
