import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig({ main: "src/main.ts" }, { dts: false });
