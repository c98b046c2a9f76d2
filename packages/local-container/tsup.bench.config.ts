import { benchConfig } from "../../tsup.base.js";
import { programTextTsupOptions } from "../../scripts/program-text.mjs";

// The benchmark runs the server from its sources, with its programs inlined as the package build does.
export default benchConfig(
  { "file-routes.bench": "bench/file-routes.bench.ts" },
  programTextTsupOptions(),
);
