import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig(
  { index: "src/index.ts", bin: "src/bin.ts" },
  { dts: { entry: { index: "src/index.ts" } } },
);
