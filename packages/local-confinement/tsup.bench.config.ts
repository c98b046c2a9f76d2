import { benchConfig } from "../../tsup.base.js";
import { programTextTsupOptions } from "../../scripts/program-text.mjs";

// The benchmark runs the confinement from its sources, with its programs inlined as the package build does.
export default benchConfig(
  { "confinement.bench": "bench/confinement.bench.ts" },
  programTextTsupOptions(),
);
