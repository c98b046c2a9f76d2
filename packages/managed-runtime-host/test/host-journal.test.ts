import { describe, expect, it } from "vitest";
import {
  type ManagedSandboxPort,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeOrphanReconciler } from "../src/orphan-reconciler.js";
import { createSupervisedSandboxHarnessDriver } from "../src/supervisor/supervised-harness-driver.js";
import { createFakeSandbox } from "../src/testing/fake-sandbox.js";
import { createScriptedSupervisorTransport } from "./support/fake-supervisor.js";
import {
  type HostFixture,
  createHostFixture,
  scope,
  supervisedProfile,
} from "./support/fixture.js";
import { tokensOf } from "./support/invariants.js";
import { ready, until } from "./support/supervised-run.js";

describe("write-ahead sandbox journal", () => {
  it("journals the lease-to-be before the runtime exists and resolves it once terminate is confirmed", async () => {
    const fixture = createHostFixture();
    const record = fixture.deps.sandboxJournal.record.bind(fixture.deps.sandboxJournal);
    const runtimesAtRecord: number[] = [];
    fixture.deps.sandboxJournal.record = async (input) => {
      runtimesAtRecord.push(fixture.deps.sandbox.runtimes.size);
      return record(input);
    };
    const result = await fixture.run();
    expect(result.type).toBe("completed");
    expect(runtimesAtRecord).toEqual([0]);
    expect(fixture.deps.sandbox.runtimes.get("fake-rt-1")?.state).toBe("stopped");
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toEqual([]);
    expect(
      fixture.logger.entries
        .filter((entry) => entry.event.startsWith("sandbox.journal"))
        .map((entry) => entry.event),
    ).toEqual(["sandbox.journaled", "sandbox.journal_resolved"]);
  });

  it("keeps the token-free record beside the orphan when terminate fails", async () => {
    const fixture = createHostFixture();
    fixture.deps.faults.add({ port: "sandbox", method: "terminate", kind: "throw" });
    const result = await fixture.run();
    expect(result.type).toBe("completed");
    const records = await fixture.deps.sandboxJournal.list({ limit: 10 });
    expect(records).toMatchObject([
      {
        scope,
        generation: 1,
        ownerId: "owner-a",
        sandbox: { provider: "fake", runtimeId: "fake-rt-1" },
        attempts: 0,
      },
    ]);
    expect(await fixture.deps.orphanStore.list({ limit: 10 })).toHaveLength(1);
    for (const token of tokensOf(fixture.journal))
      expect(JSON.stringify(records)).not.toContain(token);
  });

  it("marks the record salvageable with its start revision as the ama_worker harness starts, and clears it when the host settles the run", async () => {
    const fixture = createHostFixture();
    const marks: (number | null)[] = [];
    const set = fixture.deps.sandboxJournal.setStartRevision.bind(fixture.deps.sandboxJournal);
    fixture.deps.sandboxJournal.setStartRevision = async (input) => {
      marks.push(input.startRevision);
      return set(input);
    };
    fixture.deps.faults.add({ port: "sandbox", method: "terminate", kind: "throw" });
    expect((await fixture.run()).type).toBe("completed");
    // Set to the revision the workspace came from (none yet) before the harness, cleared in cleanup: this host
    // settled the run, so the reconciler only reaps its sandbox.
    expect(marks).toEqual([0, null]);
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toMatchObject([
      { startRevision: null },
    ]);
  });

  it("never marks the record of a run whose harness did not start", async () => {
    const fake = createFakeSandbox();
    const fixture = createHostFixture({ host: { sandbox: failingAfterStart(fake) } });
    const marks: (number | null)[] = [];
    fixture.deps.sandboxJournal.setStartRevision = async (input) =>
      void marks.push(input.startRevision);
    expect((await fixture.run()).type).toBe("failed");
    expect(marks).toEqual([]);
  });

  it("runs the harness all the same when the salvage mark cannot be written, with a warning", async () => {
    const fixture = createHostFixture();
    fixture.deps.sandboxJournal.setStartRevision = async () => {
      throw new Error("database is locked");
    };
    expect((await fixture.run()).type).toBe("completed");
    expect(fixture.logger.entries.some((entry) => entry.event === "sandbox.salvage_unmarked")).toBe(
      true,
    );
  });

  it("starts nothing and fails the run when the journal cannot be written", async () => {
    const fixture = createHostFixture();
    fixture.deps.sandboxJournal.record = async () => {
      throw new Error("database is locked");
    };
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "failed",
      error: { context: { stage: "sandbox-acquire-journal" } },
    });
    expect(result.type === "failed" && result.error.message).toContain("database is locked");
    expect(fixture.deps.sandbox.runtimes.size).toBe(0);
  });

  it("reaps in cleanup a runtime a failed acquire started and could not destroy", async () => {
    const fake = createFakeSandbox();
    const fixture = createHostFixture({ host: { sandbox: failingAfterStart(fake) } });
    const result = await fixture.run();
    expect(result).toMatchObject({ type: "failed", error: { code: "sandbox_failed" } });
    expect(fake.runtimes.get("fake-rt-1")).toMatchObject({ state: "stopped", reapCalls: 1 });
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toEqual([]);
  });

  it("leaves the record of an unreachable provider to the reconciler, which reaps it once the fence is released", async () => {
    const fake = createFakeSandbox();
    let providerDown = true;
    const sandbox = failingAfterStart(fake);
    const reap = sandbox.reap;
    sandbox.reap = async (input) => {
      if (providerDown) throw new SandboxFailedError({ message: "bridge delete unreachable" });
      return reap(input);
    };
    const fixture = createHostFixture({ host: { sandbox } });
    expect((await fixture.run()).type).toBe("failed");
    expect(fake.runtimes.get("fake-rt-1")?.state).toBe("running");
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toHaveLength(1);

    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans: fixture.deps.orphanStore,
      journal: fixture.deps.sandboxJournal,
      fences: fixture.deps.fenceStore,
      sandbox,
      clock: fixture.time,
      backoff: { baseMs: 1_000, maxMs: 1_000, jitter: 0 },
    });
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      reaped: 0,
      failed: 1,
    });
    providerDown = false;
    await fixture.time.advance(1_000);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      reaped: 1,
      failed: 0,
    });
    expect(fake.runtimes.get("fake-rt-1")?.state).toBe("stopped");
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toEqual([]);
  });
});

describe("journal records across a live checkpoint's fence rotation", () => {
  /** Another fleet worker's reconciler over the same stores: the plain reap path, no salvage. */
  const otherWorkersReconciler = (fixture: HostFixture) =>
    createManagedRuntimeOrphanReconciler({
      orphans: fixture.deps.orphanStore,
      journal: fixture.deps.sandboxJournal,
      fences: fixture.deps.fenceStore,
      sandbox: fixture.deps.sandbox.port,
      clock: fixture.time,
      ownerId: "owner-b",
    });

  it("never reaps the sandbox of a supervised run that goes on under a rotated generation", async () => {
    let fixture: HostFixture | undefined;
    const passes: unknown[] = [];
    const states: (string | undefined)[] = [];
    const transport = createScriptedSupervisorTransport(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      for (const checkpointId of ["turn-1", "turn-2"]) {
        await side.emit({ type: "checkpoint", checkpointId, sessionId: "ses-1" });
        await until(side, "checkpoint.commit");
        // The run holds generation 2 (then 3) while its journal record says 1: a pass from another
        // worker must see the run as live.
        const current = fixture as HostFixture;
        passes.push((await otherWorkersReconciler(current).runOnce({ limit: 10 })).journal);
        states.push(current.deps.sandbox.runtimes.get("fake-rt-1")?.state);
      }
      await side.emit({ type: "completed", exitCode: 0 });
    });
    fixture = createHostFixture({
      harnessDriver: (time) =>
        createSupervisedSandboxHarnessDriver({ transport, clock: time, scheduler: time }),
    });
    const result = await fixture.run({ profile: supervisedProfile }, 250);
    expect(result).toMatchObject({ type: "completed", generation: 3 });
    expect(passes).toMatchObject([
      { held: 1, reaped: 0 },
      { held: 1, reaped: 0 },
    ]);
    expect(states).toEqual(["running", "running"]);
    expect(fixture.journal.of("sandbox.reap")).toHaveLength(0);
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toEqual([]);
  });

  it("reaps the record once the rotated fence is released without the run resolving it", async () => {
    const fixture = createHostFixture({ runtime: { harness: { checkpoints: ["turn-1"] } } });
    fixture.deps.faults.add({ port: "sandbox", method: "terminate", kind: "throw" });
    expect((await fixture.run({ profile: supervisedProfile })).type).toBe("completed");
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toMatchObject([
      { generation: 1 },
    ]);
    expect((await otherWorkersReconciler(fixture).runOnce({ limit: 10 })).journal).toMatchObject({
      reaped: 1,
      held: 0,
    });
    expect(fixture.deps.sandbox.runtimes.get("fake-rt-1")?.state).toBe("stopped");
  });
});

/** A driver whose acquire journals and starts a runtime, then fails before returning a lease (destroy failed too). */
function failingAfterStart(fake: ReturnType<typeof createFakeSandbox>): ManagedSandboxPort {
  return {
    ...fake.port,
    async acquire({ journal }) {
      const runtimeId = fake.nextId();
      await journal?.record({ provider: fake.provider, runtimeId });
      fake.start("acquire", runtimeId);
      throw new SandboxFailedError({
        message: "hydrate failed: HTTP 500; destroying the runtime also failed: bridge unreachable",
      });
    },
  };
}
