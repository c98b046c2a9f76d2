import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  type HostLogger,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createMemoryFencePort,
  createMemoryOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import { createBlobMemoryAccess } from "@open-managed-agents/managed-runtime-sandbox";
import {
  NotFoundError,
  type RuntimeSessionResource,
  type SessionMemoryAccessPort,
  memoryStoresOfSession,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCloudflareBridgeManagedRuntime } from "../src/index.js";
import { scopeFor, shellProfile } from "./support.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime; the memory stores live in a
// real fs blob store (the layout a deployer's own bucket has), read and written through createBlobMemoryAccess.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;
const fences = createMemoryFencePort();

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-memory-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

const text = async (key: string) => (await store.get(key))?.text() ?? null;

type Entry = {
  readonly level: string;
  readonly event: string;
  readonly fields: Record<string, unknown>;
};

/** One work item of `sessionId` with the given memory resources; `beforeWriteBack` runs once, before the first write-back. */
async function runWorkItem(
  sessionId: string,
  script: string,
  resources: RuntimeSessionResource[],
  beforeWriteBack: () => Promise<void> = async () => undefined,
) {
  const entries: Entry[] = [];
  const access = createBlobMemoryAccess({ store });
  let interleaved: Promise<void> | undefined;
  const memories: SessionMemoryAccessPort = {
    ...access,
    update: async (input) => {
      await (interleaved ??= beforeWriteBack());
      return access.update(input);
    },
  };
  const logger: HostLogger = {
    info: (event, fields) => void entries.push({ level: "info", event, fields }),
    warn: (event, fields) => void entries.push({ level: "warn", event, fields }),
    error: (event, fields) => void entries.push({ level: "error", event, fields }),
  };
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
  });
  const scope = scopeFor(sessionId);
  const profile = { ...shellProfile(script), outputs: { requirement: "disabled" } } as const;
  const prepared = await createManagedRuntimeProviderRegistry({ drivers: [driver] }).prepare({
    provider: "cloudflare-bridge",
    placement: "driver_service",
    scope,
    profile,
    providerConfig: {},
  });
  const host = createManagedRuntimeHost({
    ownerId: "bridge-memory",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 20_000,
    fences,
    orphans: createMemoryOrphanPort(),
    ...prepared.resources,
    logger,
  });
  const session = { id: sessionId, environmentId: scope.environmentId, metadata: {}, resources };
  const result = await host.run({
    scope,
    profile,
    session,
    memoryStores: memoryStoresOfSession(session),
    sessionInputAccess: {
      downloadFile: () =>
        Promise.reject(new NotFoundError({ message: "no session files in this test" })),
      memories,
    },
  });
  return { result, entries };
}

describe("memory stores on the cloudflare-bridge driver and the local stack", () => {
  it("claims file_sync in its descriptor", () => {
    expect(
      createCloudflareBridgeManagedRuntime({
        baseUrl: "http://127.0.0.1:1",
        apiKey: "k",
        checkpointStore: createFsBlobStore({ rootDir: tmpdir() }),
      }).descriptor().memoryStores,
    ).toBe("file_sync");
  });

  it("round-trips a store across two work items: creates, updates and deletions reach the store", async () => {
    await store.put("memory-stores/mem-notes/a.md", "alpha");
    await store.put("memory-stores/mem-notes/deep/b.md", "beta");
    const notes = [
      { type: "memory_store", storeId: "mem-notes", name: "notes", access: "read_write" },
    ];
    const first = await runWorkItem(
      "session-memory-round-trip",
      `cd /mnt/memory/notes && test "$(cat a.md)" = alpha && test "$(cat deep/b.md)" = beta && printf 'alpha 2' > a.md && mkdir -p new && printf fresh > new/c.md`,
      notes,
    );
    expect(first.result, JSON.stringify(first.result)).toMatchObject({ type: "completed" });
    expect(await text("memory-stores/mem-notes/a.md")).toBe("alpha 2");
    expect(await text("memory-stores/mem-notes/new/c.md")).toBe("fresh");
    expect(
      first.entries.find((entry) => entry.event === "memory_stores.synchronized")?.fields,
    ).toMatchObject({ created: 1, updated: 1, deleted: 0, conflicts: 0 });

    // The next work item downloads what the first wrote back, and its deletion removes the document.
    const second = await runWorkItem(
      "session-memory-round-trip",
      `cd /mnt/memory/notes && test "$(cat a.md)" = 'alpha 2' && test "$(cat new/c.md)" = fresh && rm deep/b.md`,
      notes,
    );
    expect(second.result, JSON.stringify(second.result)).toMatchObject({ type: "completed" });
    expect(await store.head("memory-stores/mem-notes/deep/b.md")).toBeNull();
    expect(await text("memory-stores/mem-notes/a.md")).toBe("alpha 2");
  }, 300_000);

  it("never writes a read-only store back", async () => {
    await store.put("memory-stores/mem-handbook/rules.md", "be kind");
    const { result, entries } = await runWorkItem(
      "session-memory-read-only",
      `cd /mnt/memory/handbook && test "$(cat rules.md)" = 'be kind' && printf 'be rude' > rules.md && printf extra > added.md`,
      [{ type: "memory_store", storeId: "mem-handbook", name: "handbook", access: "read_only" }],
    );
    expect(result, JSON.stringify(result)).toMatchObject({ type: "completed" });
    expect(await text("memory-stores/mem-handbook/rules.md")).toBe("be kind");
    expect(await store.head("memory-stores/mem-handbook/added.md")).toBeNull();
    expect(
      entries.find((entry) => entry.event === "memory_stores.synchronized")?.fields,
    ).toMatchObject({ created: 0, updated: 0, readOnlyChanges: 2 });
  }, 300_000);

  it("does not overwrite a change made in the store while the work item ran", async () => {
    await store.put("memory-stores/mem-shared/plan.md", "v1");
    const { result, entries } = await runWorkItem(
      "session-memory-concurrent",
      `printf 'sandbox v2' > /mnt/memory/shared/plan.md`,
      [{ type: "memory_store", storeId: "mem-shared", name: "shared", access: "read_write" }],
      // Another writer changes the document after the copy was taken, just before the write-back reaches it.
      async () => void (await store.put("memory-stores/mem-shared/plan.md", "other writer v2")),
    );
    expect(result, JSON.stringify(result)).toMatchObject({ type: "completed" });
    expect(await text("memory-stores/mem-shared/plan.md")).toBe("other writer v2");
    expect(entries.find((entry) => entry.event === "memory_stores.conflict")).toMatchObject({
      level: "warn",
      fields: { storeId: "mem-shared", path: "plan.md", reason: "changed_in_store" },
    });
  }, 300_000);
});
