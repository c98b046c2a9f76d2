import { mergeConfig } from "vitest/config";
import { packageTestConfig } from "../../vitest.base.js";

// Cases spawn real (confined) processes on a shared machine. Programs run in a sandbox are `.sh` files,
// imported as strings (as the build's loader does).
export default mergeConfig(packageTestConfig(60_000), {
  plugins: [
    {
      name: "shell-text",
      transform: (code: string, id: string) =>
        id.endsWith(".sh") ? { code: `export default ${JSON.stringify(code)};`, map: null } : null,
    },
  ],
});
