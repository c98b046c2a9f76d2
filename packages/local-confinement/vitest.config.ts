import { build } from "esbuild";
import { mergeConfig } from "vitest/config";
import { programTextVitePlugin, shellTextVitePlugin } from "../../scripts/program-text.mjs";
import { packageTestConfig } from "../../vitest.base.js";

// Cases spawn real (confined) processes on a shared machine. Programs run in a container are imported as
// text as the build does: `.sh` as it is, and a `?program` import bundled into one CommonJS program.
export default mergeConfig(packageTestConfig(60_000), {
  plugins: [shellTextVitePlugin(), programTextVitePlugin(build)],
});
