import { mergeConfig } from "vitest/config";
import { shellTextVitePlugin } from "../../scripts/program-text.mjs";
import { packageTestConfig } from "../../vitest.base.js";

// Cases spawn real (confined) processes on a shared machine. Programs run in a sandbox are `.sh` files,
// imported as text (as the build's loader does).
export default mergeConfig(packageTestConfig(60_000), { plugins: [shellTextVitePlugin()] });
