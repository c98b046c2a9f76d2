import { describe, expect, it } from "vitest";
import { settleWithManualTime } from "../src/testing/manual-drive.js";
import { amaProfile, createHostFixture, scope, supervisedProfile } from "./support/fixture.js";
import {
  futureAbortOnlyScheduler,
  recordingScheduler,
  signalBlindScheduler,
  throwingScheduler,
} from "./support/schedulers.js";

const memorySession = {
  id: "ses-1",
  environmentId: "env-1",
  metadata: {},
  resources: [{ type: "memory_store", storeId: "mem-1", access: "read_write" }],
};
const HEARTBEAT_MS = 10_000;
const SYNC_MS = 4_000;

describe("background loops: a scheduler whose sleep fails", () => {
  it.each(["reject", "throw"] as const)(
    "monitor sleep that fails (%s) ends the run as lease_lost naming the cause, with cleanup",
    async (how) => {
      // Sleeps of one interval: the loop's wait, then the renew and heartbeat deadlines; the 4th is the loop's second wait.
      const fixture = createHostFixture({
        runtime: { harness: { durationMs: 60_000 } },
        scheduler: (time) =>
          throwingScheduler(time, HEARTBEAT_MS, new Error("timer backend unavailable"), {
            how,
            from: 4,
          }),
      });
      const result = await fixture.run();
      expect(result).toMatchObject({
        type: "lease_lost",
        error: { code: "lease_lost", context: { trigger: "scheduler_failed", stage: "monitor" } },
      });
      if (result.type !== "lease_lost") return;
      expect(result.error.message).toContain("timer backend unavailable");
      expect(result.cleanupErrors).toEqual([]);
      expect(fixture.journal.of("sandbox.terminate")).toHaveLength(1);
      expect(fixture.journal.of("fences.release")).toHaveLength(1);
      expect(fixture.journal.of("fences.publish")).toHaveLength(0);
      expect(fixture.journal.of("fences.renew")).toHaveLength(1);
      expect(fixture.time.pending()).toBe(0);
    },
  );

  it("a session-input sync sleep that fails ends the run as lease_lost naming the cause", async () => {
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 60_000 } },
      scheduler: (time) => throwingScheduler(time, SYNC_MS, new Error("timer backend unavailable")),
    });
    const result = await fixture.run({ profile: supervisedProfile, session: memorySession });
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "scheduler_failed", stage: "session-inputs-sync" } },
    });
    expect(fixture.journal.of("sandbox.terminate")).toHaveLength(1);
    expect(fixture.time.pending()).toBe(0);
  });
});

describe("background loops: sleeps and aborted signals", () => {
  it.each([
    ["a completed run with periodic sync", "none"],
    ["a caller that aborted before the run", "before"],
    ["a caller that aborts mid-run", "during"],
  ] as const)("never sleep on a signal that already fired: %s", async (_name, abort) => {
    let scheduler: ReturnType<typeof recordingScheduler> | undefined;
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 30_000 } },
      scheduler: (time) => (scheduler = recordingScheduler(time)),
    });
    const controller = new AbortController();
    if (abort === "before") controller.abort();
    const result = await settleWithManualTime(
      fixture.host.run({
        scope,
        profile: supervisedProfile,
        session: memorySession,
        signal: controller.signal,
      }),
      fixture.time,
      {
        stepMs: 1_000,
        onStep: (step) => void (abort === "during" && step === 15 && controller.abort()),
      },
    );
    expect(result.type).toBe(abort === "none" ? "completed" : "lease_lost");
    if (abort !== "before") expect(scheduler?.sleeps.length).toBeGreaterThan(0);
    expect(scheduler?.sleeps.filter((sleep) => sleep.alreadyAborted)).toEqual([]);
  });

  it("with a scheduler that only a future abort wakes, a sync round outliving the harness does not hold the run after publishing", async () => {
    let scheduler: ReturnType<typeof futureAbortOnlyScheduler> | undefined;
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 5_000 } },
      scheduler: (time) => (scheduler = futureAbortOnlyScheduler(time)),
    });
    // The first periodic sync starts at 4 s and answers at 7 s, after the harness ended at 5 s.
    fixture.deps.faults.add({
      port: "sessionInputs",
      method: "synchronize",
      occurrence: 1,
      kind: "delay",
      delayMs: 3_000,
    });
    const result = await settleWithManualTime(
      fixture.host.run({ scope, profile: supervisedProfile, session: memorySession }),
      fixture.time,
      {
        stepMs: 500,
        maxSteps: 400,
      },
    );
    expect(result.type).toBe("completed");
    expect(fixture.journal.of("fences.publish")).toHaveLength(1);
    expect(scheduler?.stuck()).toBe(0);
  });
});

describe("background loops: after the caller aborts", () => {
  it("renews the fence no more, even when a sleep resolves late", async () => {
    const fixture = createHostFixture({
      runtime: { harness: { durationMs: 60_000 } },
      scheduler: signalBlindScheduler,
    });
    const controller = new AbortController();
    let callsAtAbort = -1;
    const result = await settleWithManualTime(
      fixture.host.run({ scope, profile: amaProfile, signal: controller.signal }),
      fixture.time,
      {
        stepMs: 1_000,
        onStep: (step) => {
          if (step !== 15) return;
          callsAtAbort = fixture.journal.calls.length;
          controller.abort();
        },
      },
    );
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "caller_aborted" } },
    });
    expect(fixture.journal.of("fences.renew").length).toBeGreaterThan(0);
    const late = fixture.journal.calls
      .slice(callsAtAbort)
      .filter((call) => call.port === "fences" && call.method === "renew");
    expect(late).toEqual([]);
  });
});
