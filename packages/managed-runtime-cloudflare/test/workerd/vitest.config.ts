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
          OMA_TEST_RELAY_URL: inject("relayUrl"),
          SANDBOX_LOG_LEVEL: "error",
          // Settings of the durable workspace mount; the secret is a marker the tests search for.
          WORKSPACE_BUCKET_NAME: "oma-workspaces",
          R2_ENDPOINT: "https://test-account.r2.cloudflarestorage.com",
          R2_ACCESS_KEY_ID: "test-r2-access-key-id",
          R2_SECRET_ACCESS_KEY: "test-r2-secret-access-key-marker",
        },
      },
    })),
  ],
  resolve: { alias: { "@cloudflare/containers": here("./containers-shim.ts") } },
  test: {
    root: here("."),
    include: ["**/*.workerd.test.ts"],
    globalSetup: [here("./global-setup.ts")],
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
