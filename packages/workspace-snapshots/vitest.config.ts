import { defineConfig } from "vitest/config";

export default defineConfig({
  // Programs run in a sandbox are `.sh` files, imported as strings (as the build's loader does).
  plugins: [
    {
      name: "shell-text",
      transform: (code, id) =>
        id.endsWith(".sh") ? { code: `export default ${JSON.stringify(code)};`, map: null } : null,
    },
  ],
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Chains of snapshots run real shells and GNU tar on a shared machine: a deadline only catches a hang.
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
