import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", fs: "src/fs/index.ts", s3: "src/s3/index.ts", r2: "src/r2/index.ts", url: "src/url/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
});
