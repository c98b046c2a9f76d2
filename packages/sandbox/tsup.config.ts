import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig({ index: "src/index.ts", "local-process": "src/local-process.ts", "adapters/local-subprocess": "src/adapters/local-subprocess.ts" });
