import { libraryConfig } from "../../tsup.base.js";

export default libraryConfig(
  {
    index: "src/index.ts",
    vitest: "src/vitest/index.ts",
    testing: "src/testing/index.ts",
    cli: "src/cli/main.ts",
  },
  {
    dts: {
      entry: {
        index: "src/index.ts",
        vitest: "src/vitest/index.ts",
        testing: "src/testing/index.ts",
      },
    },
    external: ["vitest"],
  },
);
