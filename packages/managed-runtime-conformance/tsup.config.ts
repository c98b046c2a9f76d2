import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", vitest: "src/vitest/index.ts", testing: "src/testing/index.ts", cli: "src/cli/main.ts" },
  format: ["esm"],
  dts: { entry: { index: "src/index.ts", vitest: "src/vitest/index.ts", testing: "src/testing/index.ts" } },
  sourcemap: true,
  clean: true,
  target: "es2022",
  external: ["vitest"],
});
