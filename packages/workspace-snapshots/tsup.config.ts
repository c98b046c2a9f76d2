import { libraryConfig } from "../../tsup.base.js";

// Programs run in a sandbox are `.sh` files, inlined as strings.
export default libraryConfig({ index: "src/index.ts" }, { loader: { ".sh": "text" } });
