import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig({ index: "src/index.ts", sdk: "src/sdk.ts", worker: "src/worker.ts" });
