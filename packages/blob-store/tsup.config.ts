import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig({
  index: "src/index.ts",
  fs: "src/fs/index.ts",
  s3: "src/s3/index.ts",
  r2: "src/r2/index.ts",
  url: "src/url/index.ts",
});
