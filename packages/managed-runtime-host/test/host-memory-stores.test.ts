import {
  type MemoryStoreCallContext,
  type MemoryStoreMode,
  type MemoryStoreSyncReport,
  type MemoryStoresPort,
  ManagedRuntimeError,
  type RuntimeMemoryStore,
  type SessionMemoryAccessPort,
  memoryStoresOfSession,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { callSequence, createHostFixture } from "./support/fixture.js";

const stores: RuntimeMemoryStore[] = [
  { storeName: "notes", storeId: "mem-1", readOnly: false },
  { storeName: "handbook", storeId: "mem-2", readOnly: true },
];
const emptyReport: MemoryStoreSyncReport = {
  created: 1,
  updated: 0,
  deleted: 0,
  readOnlyChanges: 0,
  conflicts: [{ storeId: "mem-1", path: "a.md", reason: "changed_in_store" }],
};
const memories: SessionMemoryAccessPort = {
  list: async () => [],
  create: async () => ({ type: "applied" }),
  update: async () => ({ type: "applied" }),
  delete: async () => ({ type: "applied" }),
};

/** A memory-stores port that records the calls the host makes and the journal at each (the real ones live in the drivers). */
function recordingPort(mode: MemoryStoreMode, journal: () => string[]) {
  const calls: {
    method: string;
    before: string[];
    input: MemoryStoreCallContext & { stores?: readonly RuntimeMemoryStore[] };
  }[] = [];
  const port: MemoryStoresPort = {
    mode,
    mount: async (input) => void calls.push({ method: "mount", before: journal(), input }),
    synchronize: async (input) => (
      calls.push({ method: "synchronize", before: journal(), input }), emptyReport
    ),
  };
  return { calls, port };
}

describe("memory stores in the host transaction", () => {
  it("mounts after the attaches, before the harness, and writes file-sync stores back before the checkpoint", async () => {
    let fixture: ReturnType<typeof createHostFixture> | undefined;
    const recorder = recordingPort("file_sync", () => callSequence(fixture!.journal));
    fixture = createHostFixture({ host: { memoryStores: recorder.port } });
    const result = await fixture.run({
      memoryStores: stores,
      sessionInputAccess: { downloadFile: async () => new ReadableStream(), memories },
    });
    expect(result).toMatchObject({ type: "completed" });
    expect(recorder.calls.map((call) => call.method)).toEqual(["mount", "synchronize"]);
    const [mount, sync] = recorder.calls;
    expect(mount?.before.slice(-4)).toEqual([
      "sandbox.acquire",
      "workspace.attach",
      "outputs.attach",
      "credentialEgress.attach",
    ]);
    expect(mount?.input.stores).toEqual(stores);
    expect(mount?.input).toMatchObject({ memories, fence: { generation: 1 } });
    expect(sync?.before.at(-1)).toBe("harnessDriver.run");
    expect(sync?.before).not.toContain("workspace.checkpoint");
    expect(callSequence(fixture.journal).indexOf("workspace.checkpoint")).toBeGreaterThan(
      callSequence(fixture.journal).indexOf("harnessDriver.run"),
    );
    expect(
      fixture.logger.entries.find((entry) => entry.event === "memory_stores.conflict"),
    ).toMatchObject({
      level: "warn",
      fields: { storeId: "mem-1", path: "a.md", reason: "changed_in_store" },
    });
  });

  it("never synchronizes a mount-mode port: writes reach the store through the mount", async () => {
    const recorder = recordingPort("mount", () => []);
    const fixture = createHostFixture({ host: { memoryStores: recorder.port } });
    expect(await fixture.run({ memoryStores: stores })).toMatchObject({ type: "completed" });
    expect(recorder.calls.map((call) => call.method)).toEqual(["mount"]);
  });

  it("skips both stages when the run carries no memory stores", async () => {
    const recorder = recordingPort("file_sync", () => []);
    const fixture = createHostFixture({ host: { memoryStores: recorder.port } });
    expect(await fixture.run({})).toMatchObject({ type: "completed" });
    expect(recorder.calls).toEqual([]);
  });

  it("refuses at admission without a port, and a file-sync port without the control plane's memory access", async () => {
    for (const host of [{}, { memoryStores: recordingPort("file_sync", () => []).port }]) {
      const fixture = createHostFixture({ host });
      const result = await fixture.run({ memoryStores: stores });
      expect(result.type).toBe("failed");
      if (result.type !== "failed") continue;
      expect(ManagedRuntimeError.hasCode(result.error, "capability_unsupported")).toBe(true);
      expect(result.error.context).toMatchObject({
        requirement: "memory_stores",
        stage: "admission",
      });
      expect(callSequence(fixture.journal)).not.toContain("sandbox.acquire");
    }
  });

  it("fails the run at the write-back stage when synchronisation fails, and publishes nothing", async () => {
    const failing: MemoryStoresPort = {
      mode: "file_sync",
      mount: async () => undefined,
      synchronize: () => Promise.reject(new Error("exec failed")),
    };
    const fixture = createHostFixture({ host: { memoryStores: failing } });
    const result = await fixture.run({
      memoryStores: stores,
      sessionInputAccess: { downloadFile: async () => new ReadableStream(), memories },
    });
    expect(result.type).toBe("failed");
    if (result.type !== "failed") return;
    expect(result.error.context).toMatchObject({ stage: "memory-stores-synchronize-final" });
    expect(callSequence(fixture.journal)).not.toContain("fences.publish");
  });

  it("rejects malformed stores as invalid_request before anything runs", async () => {
    const fixture = createHostFixture({
      host: { memoryStores: recordingPort("mount", () => []).port },
    });
    const duplicate = [stores[0]!, { ...stores[0]!, storeId: "mem-3" }];
    for (const memoryStores of [
      [{ storeName: "../etc", storeId: "mem-1", readOnly: false }],
      duplicate,
      [{ storeName: "a", storeId: "b", readOnly: false, extra: 1 }],
    ]) {
      await expect(
        fixture.run({ memoryStores: memoryStores as RuntimeMemoryStore[] }),
      ).rejects.toSatisfy((error) => ManagedRuntimeError.hasCode(error, "invalid_request"));
    }
  });

  it("derives the stores from the session's memory_store resources", () => {
    const session = {
      resources: [
        { type: "memory_store", storeId: "mem-1", access: "read_write", name: "notes" },
        { type: "file", fileId: "file-1" },
        { type: "memory_store", storeId: "mem-2", access: "read_only" },
      ],
    };
    expect(memoryStoresOfSession(session)).toEqual([
      { storeName: "notes", storeId: "mem-1", readOnly: false },
      { storeName: "mem-2", storeId: "mem-2", readOnly: true },
    ]);
  });
});
