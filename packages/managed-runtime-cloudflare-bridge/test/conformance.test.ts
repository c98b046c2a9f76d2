import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { defineManagedRuntimeConformanceSuite } from "@open-managed-agents/managed-runtime-conformance/vitest";
import { afterAll, beforeAll, expect, it } from "vitest";

// Cloudflare's own bridge Worker in local workerd over the local container runtime stands in for a deployed bridge.
let bridge: LocalBridge;
let storeDir: string;
const factoryOptions: Record<string, unknown> = {};

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-conformance-"));
  const store = createFsBlobStore({ rootDir: storeDir });
  Object.assign(factoryOptions, {
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    outputStore: store,
  });
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

defineManagedRuntimeConformanceSuite({
  name: "cloudflare-bridge on the local stack",
  // Loaded by module specifier through the host's loader, resolved from this package (a self-reference).
  loadDriver: {
    provider: "cloudflare-bridge",
    moduleSpecifier: "@open-managed-agents/managed-runtime-cloudflare-bridge",
    importModule: (specifier) => import(specifier),
  },
  factoryOptions,
  timeouts: { caseMs: 120_000, heartbeatIntervalMs: 5_000 },
});

// Runs after the suite (file order): every sandbox the cases started, reaped or terminated is gone,
// and no call after a delete started a fresh container for the deleted id.
it("leaves no container running on the local runtime after the suite", async () => {
  const deadline = Date.now() + 60_000;
  while (bridge.containerServer.containers.list().length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 250));
  // A leftover says when it started and what ran in it, to tell which case or late call started it.
  const left = bridge.containerServer.containers.list().map((container) => ({
    id: container.id,
    createdAt: container.createdAt.toISOString(),
    processes: container.processes.list().map((record) => record.command.slice(0, 120)),
  }));
  // Whether the bridge's pool still assigns it to a sandbox id, or lost track of it (a pool start that failed).
  const pool =
    left.length === 0
      ? null
      : await fetch(`${bridge.url}/v1/pool/stats`, {
          headers: { Authorization: `Bearer ${bridge.apiKey}` },
        }).then((response) => response.json(), String);
  expect({ left, pool }).toEqual({ left: [], pool: null });
}, 90_000);
