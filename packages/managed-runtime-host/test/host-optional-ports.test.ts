import { describe, expect, it } from "vitest";
import type { SessionInputLifecycleContext } from "@open-managed-agents/runtime-resource-contract";
import { amaProfile, createHostFixture, supervisedProfile } from "./support/fixture.js";

const memorySession = (access: string) => ({
  id: "ses-1",
  environmentId: "env-1",
  metadata: {},
  resources: [{ type: "memory_store", storeId: "mem-1", access }],
});
const checkpointing = {
  suspendResume: "unsupported",
  hardTerminate: "supported",
  runtimeCheckpoints: ["filesystem"],
} as const;

describe("session inputs", () => {
  it("synchronizes periodically while the materializer owns a writable memory store", async () => {
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 10_000 } },
    });
    const result = await fixture.run({
      profile: supervisedProfile,
      session: memorySession("read_write"),
    });
    expect(result.type).toBe("completed");
    const labels = fixture.journal
      .of("sessionInputs.synchronize")
      .map((call) => (call.input as { idempotencyKey: string }).idempotencyKey);
    expect(labels.slice(0, 2)).toEqual([
      "work-1:1:session-inputs-synchronize-periodic-1",
      "work-1:1:session-inputs-synchronize-periodic-2",
    ]);
    expect(labels.at(-1)).toBe("work-1:1:session-inputs-synchronize-final");
    const materialize = fixture.journal.of("sessionInputs.materialize")[0]
      ?.input as SessionInputLifecycleContext;
    expect(materialize.resourceOwnership).toEqual({ memoryStore: "materializer" });
  });

  it("leaves memory stores to the AMA worker and does not sync a read-only store periodically", async () => {
    const worker = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 10_000 } },
    });
    await worker.run({ session: memorySession("read_write") });
    expect(
      (worker.journal.of("sessionInputs.materialize")[0]!.input as SessionInputLifecycleContext)
        .resourceOwnership,
    ).toEqual({ memoryStore: "worker" });
    expect(worker.journal.of("sessionInputs.synchronize")).toHaveLength(1);

    const readOnly = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 10_000 } },
    });
    await readOnly.run({ profile: supervisedProfile, session: memorySession("read_only") });
    expect(readOnly.journal.of("sessionInputs.synchronize")).toHaveLength(1);
  });

  it("fails the run when a periodic sync fails", async () => {
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 60_000 } },
    });
    fixture.deps.faults.add({
      port: "sessionInputs",
      method: "synchronize",
      kind: "throw",
      occurrence: 2,
    });
    const result = await fixture.run({
      profile: supervisedProfile,
      session: memorySession("read_write"),
    });
    expect(result).toMatchObject({
      type: "failed",
      error: { context: { stage: "session-inputs-synchronize-periodic-2" } },
    });
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("loses the lease when authorize finds the fence no longer current", async () => {
    const fixture = createHostFixture({ runtime: { sessionInputs: true } });
    fixture.journal.onCall((call) => {
      if (call.port === "sessionInputs" && call.method === "materialize") {
        void fixture.deps.ports.fences.release({
          fence: (call.input as SessionInputLifecycleContext).fence,
          reason: "failed",
        });
      }
    });
    const result = await fixture.run({ session: memorySession("read_write") });
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "fence_not_current", stage: "fence-is-current" } },
    });
  });
});

describe("runtime checkpoints", () => {
  it("publishes without a runtime checkpoint when an optional one fails, with a warning", async () => {
    const fixture = createHostFixture({
      runtime: { runtimeCheckpoint: true, sandboxCapabilities: checkpointing },
    });
    fixture.deps.faults.add({ port: "runtimeCheckpoint", method: "create", kind: "throw" });
    const result = await fixture.run({ profile: { ...amaProfile, runtimeCheckpoint: "optional" } });
    expect(result.type).toBe("completed");
    expect(
      (fixture.journal.of("fences.publish")[0]!.input as { runtimeCheckpoint: unknown })
        .runtimeCheckpoint,
    ).toBeNull();
    expect(
      fixture.logger.entries.find((entry) => entry.event === "runtime_checkpoint.skipped")?.fields
        .stage,
    ).toBe("runtime-checkpoint-create");
  });

  it("fails the run when a required runtime checkpoint fails", async () => {
    const fixture = createHostFixture({
      runtime: { runtimeCheckpoint: true, sandboxCapabilities: checkpointing },
    });
    fixture.deps.faults.add({ port: "runtimeCheckpoint", method: "create", kind: "throw" });
    const result = await fixture.run({ profile: { ...amaProfile, runtimeCheckpoint: "required" } });
    expect(result).toMatchObject({
      type: "failed",
      error: { context: { stage: "runtime-checkpoint-create" } },
    });
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("refuses a runtime checkpoint that does not describe the run", async () => {
    const fixture = createHostFixture({
      runtime: { runtimeCheckpoint: true, sandboxCapabilities: checkpointing },
    });
    const port = fixture.deps.ports.runtimeCheckpoint;
    if (!port) throw new Error("runtime checkpoint port missing");
    const create = port.create;
    (port as { create: typeof create }).create = async (input) => ({
      ...(await create(input)),
      sessionId: "ses-other",
    });
    const result = await fixture.run({ profile: { ...amaProfile, runtimeCheckpoint: "required" } });
    expect(result).toMatchObject({
      type: "failed",
      error: { code: "capability_drift", message: expect.stringContaining("sessionId") },
    });
  });
});
