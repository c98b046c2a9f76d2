import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { unstable_readConfig } from "wrangler";
import { type ViteUserConfig, defineConfig } from "vitest/config";
import { installedSdkVersion, sdkUnderTest } from "../../scripts/sdk-matrix/versions.mjs";
import { sdkMatrixAliases } from "../../vitest.sdk-matrix.js";
import { createStallWatchdog } from "../../vitest.stall-watchdog.js";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Rejections `@cloudflare/containers` 0.3.7 leaves unhandled. Its `containerFetch` forwards a container
 * response body with `res.body.pipeTo(writable).finally(...)` and no `catch`; when the reader cancels
 * the body (the driver does once a process's log stream sent its exit frame), that promise rejects
 * with one of these messages. Deployed, the runtime only logs them; here they would fail the run.
 * Only these exact messages are ignored; every other unhandled error still fails it.
 */
const UPSTREAM_CANCELLED_BODY = new Set(["Stream was cancelled.", "Network connection lost."]);

const deployed = unstable_readConfig({ config: here("./wrangler.jsonc") }).vars as {
  PROFILES: Record<string, { driver: { process: object } }>;
};
const amaWorker = deployed.PROFILES["ama-worker"];

/**
 * wrangler.jsonc's profiles, with the deployed `ama-worker` profile's worker ending a turn after 1 s of
 * session idle instead of the SDK's 60 s, so each claimed item stops promptly.
 */
const PROFILES = {
  ...deployed.PROFILES,
  "ama-worker": {
    ...amaWorker,
    driver: {
      ...amaWorker?.driver,
      process: { ...amaWorker?.driver.process, env: { OMA_AMA_MAX_IDLE_MS: "1000" } },
    },
  },
};

/** A test bearer token; the deployed Worker gets its own with `wrangler secret put API_TOKEN`. */
export const TEST_API_TOKEN = "test-token-0123456789abcdef";

/** What differs between the workerd runs of this app (the tests, the load benchmark). */
export interface WorkerdRunOptions {
  /** Files the run collects. */
  readonly include: readonly string[];
  /** Bindings added to (or replacing) the tests' own. */
  readonly bindings?: Readonly<Record<string, unknown>>;
  /** Deadline of one test. @default 60_000 */
  readonly testTimeout?: number;
}

/** Deadline of one hook. */
const HOOK_TIMEOUT_MS = 60_000;
/** Longest deadline a test sets for itself (environment.test.ts's orphan reap); the watchdog waits past it. */
const LONGEST_TEST_MS = 180_000;

/**
 * The Worker as wrangler.jsonc declares it, inside workerd: the real `Sandbox`, `WorkRunner`,
 * `EnvironmentRunner` and `ClaimCoordinator` Durable Objects, D1 and R2. Only the container is replaced,
 * by the local container server (`@open-managed-agents/local-container`), through the
 * `@cloudflare/containers` alias. The global setup starts that server and the local control plane.
 */
export function workerdRunConfig(options: WorkerdRunOptions): ViteUserConfig {
  return defineConfig({
    plugins: [
      cloudflareTest(async ({ inject }) => {
        const environment = inject("environment");
        return {
          wrangler: { configPath: here("./wrangler.jsonc") },
          miniflare: {
            bindings: {
              API_TOKEN: TEST_API_TOKEN,
              // The self-hosted environment on the local control plane the global setup started.
              ENVIRONMENT_ID: environment.environmentId,
              ENVIRONMENT_KEY: environment.environmentKey,
              WEBHOOK_SECRET: environment.webhookSecret,
              MANAGED_AGENTS_BASE_URL: environment.planeUrl,
              TEST_ENVIRONMENT: environment,
              PROFILES,
              // Host lease renewals every 5 s, so a lease taken over mid-run is noticed within the test.
              LEASE_TTL_MS: "15000",
              OMA_TEST_CONTAINER_URL: inject("containerServerUrl"),
              OMA_TEST_CONTAINER_TOKEN: inject("containerControlToken"),
              // The local container has no presigned-URL upload path; backups go through the binding.
              SANDBOX_LOCAL_BACKUPS: "true",
              SANDBOX_LOG_LEVEL: "error",
              LOG_LEVEL: "error",
              TEST_MIGRATIONS: await readD1Migrations(here("./migrations")),
              // The SDK version this run's Worker must hold (OMA_TEST_SDK), checked by sdk-under-test.test.ts.
              TEST_SDK_VERSION: installedSdkVersion(sdkUnderTest(), here(".")),
              ...options.bindings,
            },
          },
        };
      }),
    ],
    // The Worker's SDK (and the oma-ama-worker bin the global setup installs) is the one OMA_TEST_SDK names.
    resolve: {
      alias: [
        { find: "@cloudflare/containers", replacement: here("./test/support/containers-shim.ts") },
        ...sdkMatrixAliases(),
      ],
    },
    test: {
      include: [...options.include],
      globalSetup: [here("./test/support/global-setup.ts")],
      setupFiles: [here("./test/support/apply-migrations.ts")],
      onUnhandledError: (error) => !UPSTREAM_CANCELLED_BODY.has(error.message),
      testTimeout: options.testTimeout ?? 60_000,
      hookTimeout: HOOK_TIMEOUT_MS,
      // Two minutes past the longest test or hook deadline without any test event ends the run (exit 75).
      reporters: [
        "default",
        createStallWatchdog({
          stallMs:
            Math.max(options.testTimeout ?? 60_000, LONGEST_TEST_MS, HOOK_TIMEOUT_MS) + 120_000,
        }),
      ],
    },
  });
}
