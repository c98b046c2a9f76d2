import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { shellTextVitePlugin } from "../../../../scripts/program-text.mjs";
import { createStallWatchdog } from "../../../../vitest.stall-watchdog.js";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** Longest deadline a test here sets for itself (lifecycle's lost-lease run); the stall watchdog waits past it. */
const LONGEST_TEST_MS = 120_000;

/**
 * Tests that run inside workerd: the real Sandbox Durable Object and the SDK's client code, real D1 and
 * R2; only the container is replaced, by the local container server (`@open-managed-agents/local-container`).
 */
export default defineConfig({
  plugins: [
    shellTextVitePlugin(),
    cloudflareTest(({ inject }) => ({
      main: here("./worker.ts"),
      miniflare: {
        compatibilityDate: "2026-04-01",
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: {
          SANDBOX: { className: "TestSandbox", useSQLite: true },
          PLAIN_SANDBOX: { className: "PlainSandbox", useSQLite: true },
          CONFINED_SANDBOX: { className: "ConfinedSandbox", useSQLite: true },
        },
        d1Databases: ["VAULT_DB"],
        r2Buckets: ["FILES_BUCKET", "BACKUP_BUCKET", "WORKSPACE_BUCKET"],
        bindings: {
          OMA_TEST_CONTAINER_URL: inject("containerServerUrl"),
          OMA_TEST_CONTAINER_TOKEN: inject("containerControlToken"),
          UPSTREAM_URL: inject("upstreamUrl"),
          OMA_TEST_RELAY_URL: inject("relayUrl"),
          OMA_TEST_CONTROL_PLANE_URL: inject("controlPlaneUrl"),
          OMA_TEST_CONTROL_PLANE_ADMIN_TOKEN: inject("controlPlaneAdminToken"),
          OMA_TEST_AMA_WORKER_BIN_DIR: inject("amaWorkerBinDirectory"),
          // What the hostile-command probes check the host and the container runtime against.
          OMA_TEST_CONTAINER_CONFINEMENT: inject("containerConfinement"),
          OMA_TEST_CONTAINER_MAX_FILE_BYTES: inject("containerMaxFileBytes"),
          OMA_TEST_HOST_SENTINELS: inject("hostSentinels"),
          OMA_TEST_HOST_CHANGES_URL: inject("hostChangesUrl"),
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
    // vitest-pool-workers 0.15.1 can wait forever between files; scripts/run-workerd-tests.mjs runs a stalled
    // run once more (never one in which a test failed).
    reporters: ["default", createStallWatchdog({ stallMs: LONGEST_TEST_MS + 120_000 })],
  },
});
