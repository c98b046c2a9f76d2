/**
 * Runs a Worker fixture that drives the real `@cloudflare/sandbox` 0.12.10 SDK (the Sandbox Durable Object,
 * `getSandbox`, `SandboxClient`) in local workerd through Miniflare, with `@cloudflare/containers` replaced
 * by the shim and the container control API answered by a local container server. The SDK cannot be
 * imported in plain Node, so each scenario runs in the Worker and answers JSON.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Plugin, build } from "esbuild";
import { WORKER_BUNDLE_OPTIONS } from "../../../scripts/worker-bundle-options.mjs";
import { Log, LogLevel, Miniflare } from "miniflare";
import { afterAll, beforeAll, expect } from "vitest";
import { type TestServer, startTestServer } from "./helpers.js";

const shimSource = fileURLToPath(new URL("../src/shim/containers-shim.ts", import.meta.url));

/** Aliases `@cloudflare/containers` to the shim source; the shim itself still imports the real package. */
const containersShim: Plugin = {
  name: "containers-shim",
  setup(builder) {
    builder.onResolve({ filter: /^@cloudflare\/containers$/ }, (args) =>
      args.importer === shimSource ? undefined : { path: shimSource },
    );
  },
};

export interface SdkHarness {
  readonly harness: TestServer;
  /** Runs a scenario of the fixture for the sandbox `name`; fails the test when the scenario threw. */
  run(scenario: string, name?: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Bundles `fixture` (a path under test/fixtures) and starts it in Miniflare against a fresh local container server. */
export async function startSdkHarness(fixture: string): Promise<SdkHarness> {
  const harness = await startTestServer();
  const bundleDir = await mkdtemp(join(tmpdir(), "oma-sdk-worker-"));
  await build({
    ...WORKER_BUNDLE_OPTIONS,
    entryPoints: [fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url))],
    outfile: join(bundleDir, "worker.js"),
    plugins: [containersShim],
    logLevel: "error",
  });
  const miniflare = new Miniflare({
    modules: true,
    scriptPath: join(bundleDir, "worker.js"),
    modulesRoot: bundleDir,
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { Sandbox: { className: "Sandbox", useSQLite: true } },
    // The SDK logs every call at info; errors are enough here.
    bindings: {
      OMA_LOCAL_CONTAINER_URL: harness.server.url,
      OMA_LOCAL_CONTAINER_TOKEN: harness.server.controlToken,
      SANDBOX_LOG_LEVEL: "error",
    },
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  await miniflare.ready;
  return {
    harness,
    async run(scenario, name = scenario) {
      const response = await miniflare.dispatchFetch(`http://sdk.local/${scenario}?name=${name}`);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body.error, String(body.error)).toBeUndefined();
      return body;
    },
    async stop() {
      await miniflare.dispose();
      await harness.stop();
      await rm(bundleDir, { recursive: true, force: true });
    },
  };
}

/** Starts the fixture before the file's tests and stops it after; the getter returns the running harness. */
export function useSdkHarness(fixture: string): () => SdkHarness {
  let sdk: SdkHarness | undefined;
  beforeAll(async () => {
    sdk = await startSdkHarness(fixture);
  }, 60_000);
  afterAll(() => sdk?.stop());
  return () => {
    if (sdk === undefined) throw new Error(`the SDK harness for ${fixture} did not start`);
    return sdk;
  };
}
