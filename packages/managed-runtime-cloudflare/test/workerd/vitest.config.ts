import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Tests that run inside workerd: the real Sandbox Durable Object and the SDK's client code, real D1 and
 * R2; only the container is replaced, by the local container server (`@open-managed-agents/local-container`).
 */
export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      main: here("./worker.ts"),
      miniflare: {
        compatibilityDate: "2026-04-01",
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: {
          SANDBOX: { className: "TestSandbox", useSQLite: true },
          PLAIN_SANDBOX: { className: "PlainSandbox", useSQLite: true },
        },
        d1Databases: ["VAULT_DB"],
        r2Buckets: ["FILES_BUCKET", "BACKUP_BUCKET", "WORKSPACE_BUCKET"],
        bindings: {
          OMA_TEST_CONTAINER_URL: inject("containerServerUrl"),
          UPSTREAM_URL: inject("upstreamUrl"),
          SANDBOX_LOG_LEVEL: "error",
        },
      },
    })),
  ],
  resolve: { alias: { "@cloudflare/containers": here("./containers-shim.ts") } },
  test: {
    root: here("."),
    include: ["**/*.workerd.test.ts"],
    globalSetup: [here("./global-setup.ts")],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
