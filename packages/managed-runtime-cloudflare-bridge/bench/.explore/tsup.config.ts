import { defineConfig } from "tsup";
export default defineConfig({ entry: { parent: "bench/.explore/parent.ts", "restore-variant": "bench/.explore/restore-variant.ts", "driver-child": "bench/driver-child.ts" }, outDir: "bench/.explore/out", format: ["esm"], platform: "node", target: "es2022", skipNodeModulesBundle: true, splitting: true });
