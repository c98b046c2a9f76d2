import { libraryConfig } from "../../tsup.base.js";
import { shellTextTsupOptions } from "../../scripts/program-text.mjs";

// Programs run in a sandbox are `.sh` files, inlined as text.
export default libraryConfig({ index: "src/index.ts" }, shellTextTsupOptions());
