import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      main: here("./worker.ts"),
      miniflare: {
        compatibilityDate: "2026-04-01",
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: { SANDBOX: { className: "TestSandbox", useSQLite: true } },
        bindings: { OMA_TEST_CONTAINER_URL: inject("containerServerUrl") },
      },
    })),
  ],
  resolve: { alias: { "@cloudflare/containers": here("./containers-shim.ts") } },
  test: {
    root: here("."),
    include: ["**/*.workerd.test.ts"],
    globalSetup: [here("./global-setup.ts")],
    testTimeout: 60_000,
  },
});
