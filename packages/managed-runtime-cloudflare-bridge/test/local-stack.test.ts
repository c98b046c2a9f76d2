import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createMemoryFencePort,
  createMemoryOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CheckpointProgress,
  type CloudflareBridgeManagedRuntimeOptions,
  createCloudflareBridgeManagedRuntime,
} from "../src/index.js";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";
import { createBridgeSandboxProvider } from "../src/runtime/bridge-provider.js";
import { createTombstoningClient } from "../src/runtime/tombstoning-client.js";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import { scopeFor, shellProfile } from "./support.js";

// Cloudflare's own bridge Worker in local workerd, over the local container runtime (no Docker).
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-store-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

async function runWorkItem(
  scope: RuntimeResourceScope,
  profile: ManagedRuntimeProfile,
  overrides: Partial<CloudflareBridgeManagedRuntimeOptions> = {},
) {
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    outputStore: store,
    ...overrides,
  });
  const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
  const prepared = await registry.prepare({
    provider: "cloudflare-bridge",
    placement: "driver_service",
    scope,
    profile,
    providerConfig: {},
  });
  const fences =
    (runWorkItem as unknown as { fences?: ReturnType<typeof createMemoryFencePort> }).fences ??
    createMemoryFencePort();
  (runWorkItem as unknown as { fences: typeof fences }).fences = fences;
  const host = createManagedRuntimeHost({
    ownerId: "bridge-test",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 20_000,
    fences,
    orphans: createMemoryOrphanPort(),
    ...prepared.resources,
  });
  return host.run({ scope, profile });
}

describe("cloudflare-bridge driver against the local stack", () => {
  it("checkpoints /workspace in one work item and restores it in the next, collecting outputs", async () => {
    const first = await runWorkItem(
      scopeFor("session-small"),
      shellProfile(
        "mkdir -p src && printf 'hello bridge' > src/notes.txt && printf '{\"ok\":true}' > /mnt/session/outputs/report.json",
      ),
    );
    expect(first.type).toBe("completed");
    const second = await runWorkItem(
      scopeFor("session-small"),
      shellProfile('test "$(cat /workspace/src/notes.txt)" = "hello bridge"'),
    );
    expect(second).toMatchObject({ type: "completed", revision: 2 });
  }, 120_000);

  it("reports checkpoint and restore progress with entries, bytes and the step", async () => {
    const reports: CheckpointProgress[] = [];
    const onProgress = (report: CheckpointProgress) => reports.push(report);
    const first = await runWorkItem(
      scopeFor("session-progress"),
      shellProfile("mkdir -p src && for i in $(seq 1 40); do echo file $i > src/f$i.txt; done"),
      { onProgress },
    );
    expect(first.type).toBe("completed");
    const checkpoint = reports.filter((report) => report.phase === "checkpoint");
    expect(checkpoint.map((report) => report.step)).toContain("contents");
    const done = checkpoint.at(-1);
    expect(done).toMatchObject({ step: "done", sandboxId: expect.any(String) });
    expect(done?.entries).toBe(done?.totalEntries);
    expect(done?.entries).toBeGreaterThan(40);
    expect(done?.bytes).toBe(done?.totalBytes);

    reports.length = 0;
    const second = await runWorkItem(
      scopeFor("session-progress"),
      shellProfile('test "$(cat /workspace/src/f40.txt)" = "file 40"'),
      { onProgress },
    );
    expect(second.type).toBe("completed");
    const restore = reports.filter((report) => report.phase === "restore");
    // Read and checked before a sandbox exists; sent and proved in the sandbox after.
    expect(restore[0]).toMatchObject({ step: "assemble" });
    expect(restore[0]?.sandboxId).toBeUndefined();
    const restored = restore.at(-1);
    expect(restored).toMatchObject({ step: "done", sandboxId: expect.any(String) });
    expect(restored?.entries).toBe(done?.entries);
    expect(restored?.totalEntries).toBe(done?.entries);
    expect(restored?.bytes).toBe(restored?.totalBytes);
    expect(restored?.bytes).toBeGreaterThan(0);
  }, 120_000);

  it("moves workspaces larger than one request through archive parts and joins oversize files", async () => {
    const options = { singleRequestBytes: 64 * 1024, partBytes: 256 * 1024 };
    const script =
      "head -c 1500000 /dev/urandom > big.bin && sha256sum big.bin > big.sha && for i in $(seq 1 40); do echo $i > f$i.txt; done";
    const first = await runWorkItem(scopeFor("session-large"), shellProfile(script), options);
    expect(first.type).toBe("completed");
    const second = await runWorkItem(
      scopeFor("session-large"),
      shellProfile('sha256sum -c big.sha && test "$(cat f40.txt)" = 40'),
      options,
    );
    expect(second.type).toBe("completed");
  }, 180_000);

  it("fails a work item whose harness exits non-zero and names the failure", async () => {
    const result = await runWorkItem(
      scopeFor("session-fail"),
      shellProfile("echo broken >&2; exit 7"),
    );
    expect(result.type).toBe("failed");
    if (result.type === "failed") expect(result.error.code).toBe("sandbox_failed");
  }, 120_000);

  it("reports a lost lease when the bridge replaced the container, instead of presenting an empty one as the same runtime", async () => {
    const client = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
    const checkpointer = createBridgeCheckpointer({
      provider: "cloudflare-bridge",
      client,
      store,
      keyPrefix: "replaced",
      excludes: [],
      maxRequestBytes: 1 << 20,
      partBytes: 1 << 18,
      archiveLimits: { maxEntries: 10_000, maxBytes: 1 << 24, maxEntryBytes: 1 << 24 },
    });
    const provider = createBridgeSandboxProvider({
      provider: "cloudflare-bridge",
      client,
      checkpointer,
      maxRequestBytes: 1 << 20,
      maxExecOutputBytes: 1 << 20,
    });
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    await runtime.renewLease({ ttlMs: 60_000 });
    // Eviction: the container's processes and files disappear while the bridge still knows the id.
    for (const container of bridge.containerServer.containers.list())
      await bridge.containerServer.containers.destroy(container.id);
    // Depending on when the Durable Object notices, the renewal fails in transport or finds a fresh container
    // without the marker; either way the runtime is never renewed as if nothing happened.
    const error = await runtime.renewLease({ ttlMs: 60_000 }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(["lease_lost", "sandbox_failed"]).toContain((error as { code?: string } | null)?.code);
    await runtime.destroy();
  }, 120_000);

  it("leaves no container behind when a driver instance probes a sandbox another one deleted", async () => {
    // Two driver instances with their own destroyed-sandbox records, as a host and a later reaper would have.
    const providerOf = () => {
      const client = createTombstoningClient(
        createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey }),
      );
      const checkpointer = createBridgeCheckpointer({
        provider: "cloudflare-bridge",
        client,
        store,
        keyPrefix: "probed",
        excludes: [],
        maxRequestBytes: 1 << 20,
        partBytes: 1 << 18,
        archiveLimits: { maxEntries: 10_000, maxBytes: 1 << 24, maxEntryBytes: 1 << 24 },
      });
      return createBridgeSandboxProvider({
        provider: "cloudflare-bridge",
        client,
        checkpointer,
        maxRequestBytes: 1 << 20,
        maxExecOutputBytes: 1 << 20,
      });
    };
    const earlier = new Set(
      bridge.containerServer.containers.list().map((container) => container.id),
    );
    const holder = await providerOf().create({ sessionId: "s", workdir: "/workspace" });
    const runtimeId = holder.runtimeHandle().runtimeId;
    await (
      await providerOf().connect(runtimeId, { sessionId: "s", workdir: "/workspace" })
    ).destroy();

    // The bridge answers the holder's calls with a fresh container; the holder sees it is not its own and deletes it.
    expect(await holder.status()).toBe("stopped");
    const renewal = await holder.renewLease({ ttlMs: 60_000 }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect((renewal as { code?: string } | null)?.code).toBe("lease_lost");
    const deadline = Date.now() + 30_000;
    // Neither the holder's own container nor a replacement its calls started is left.
    const started = () =>
      bridge.containerServer.containers.list().filter((container) => !earlier.has(container.id));
    while (started().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(started().map((container) => container.id)).toEqual([]);
  }, 120_000);
});
