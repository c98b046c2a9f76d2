import { libraryConfig } from "../../tsup.base.js";
import { programTextTsupOptions } from "../../scripts/program-text.mjs";

// Programs run in a container are files of their own, inlined as text: `.sh` as it is, and a
// `?program` import (src/programs/) bundled into one CommonJS program.
export default libraryConfig(
  { index: "src/index.ts", "local-subprocess": "src/local-subprocess/index.ts" },
  programTextTsupOptions(),
);
