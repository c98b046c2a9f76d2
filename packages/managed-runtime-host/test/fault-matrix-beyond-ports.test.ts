/**
 * The fault matrix beyond port calls: a scheduler whose sleep fails at each sleep a fault-free run
 * makes (rejecting or throwing), and supervisor events that arrive after `completed`. Every case keeps
 * the invariants of the port matrix and names what went wrong.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import type {
  HarnessSupervisorEvent,
  RuntimeSessionSnapshot,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeRunResult } from "../src/host/types.js";
import { createSupervisedSandboxHarnessDriver } from "../src/supervisor/supervised-harness-driver.js";
import { settleWithManualTime } from "../src/testing/manual-drive.js";
import type { Scheduler } from "../src/time.js";
import {
  type SupervisorSide,
  createScriptedSupervisorTransport,
} from "./support/fake-supervisor.js";
import {
  type HostFixture,
  createHostFixture,
  scope,
  serializedOutputs,
  supervisedProfile,
} from "./support/fixture.js";
import {
  duplicatePublishCalls,
  leakedTokens,
  tokensOf,
  unaccountedRuntimes,
} from "./support/invariants.js";
import { ready, until } from "./support/supervised-run.js";

const session: RuntimeSessionSnapshot = {
  id: "ses-1",
  environmentId: "env-1",
  metadata: {},
  resources: [{ type: "memory_store", storeId: "mem-1", access: "read_write" }],
};
const BROKEN = "scheduler broke";

/** Checks what every case must keep: runtimes accounted for, no token anywhere, one publish per generation, nothing left running. */
async function expectInvariants(
  fixture: HostFixture,
  result: ManagedRuntimeRunResult,
): Promise<void> {
  const orphans = await fixture.deps.orphanStore.list({ limit: 100 });
  const owner = {
    label: "host",
    journal: fixture.journal,
    sandbox: fixture.deps.sandbox,
    orphans,
    retained: new Set<string>(),
    reportedLeaks: new Set<string>(),
  };
  expect(unaccountedRuntimes(owner)).toEqual([]);
  expect(
    leakedTokens(tokensOf(fixture.journal), [await serializedOutputs(fixture, result)]),
  ).toEqual([]);
  expect(duplicatePublishCalls([fixture.journal])).toEqual([]);
  expect(fixture.time.pending()).toBe(0);
}

function describeResult(result: ManagedRuntimeRunResult): string {
  return `${JSON.stringify(result)}\n${inspect(result, { depth: Infinity })}`;
}

describe("fault matrix: a scheduler whose sleep fails", () => {
  const run = async (failAt: number | null, how: "reject" | "throw") => {
    let sleeps = 0;
    const fixture = createHostFixture({
      runtime: { sessionInputs: true, harness: { durationMs: 25_000 } },
      scheduler: (time): Scheduler => ({
        sleep(ms, signal) {
          sleeps += 1;
          if (sleeps !== failAt) return time.sleep(ms, signal);
          if (how === "throw") throw new Error(BROKEN);
          return Promise.reject(new Error(BROKEN));
        },
      }),
    });
    const result = await settleWithManualTime(
      fixture.host.run({ scope, profile: supervisedProfile, session }),
      fixture.time,
      { stepMs: 1_000, maxSteps: 400 },
    );
    return { fixture, result, sleeps };
  };

  it.each(["reject", "throw"] as const)(
    "a failure (%s) at every sleep of a fault-free run keeps the invariants and is named",
    async (how) => {
      const baseline = await run(null, how);
      expect(baseline.result.type).toBe("completed");
      expect(baseline.sleeps).toBeGreaterThan(10);
      const triggers = new Set<string>();
      for (let failAt = 1; failAt <= baseline.sleeps; failAt += 1) {
        const { fixture, result } = await run(failAt, how);
        await expectInvariants(fixture, result);
        if (result.type === "lease_lost") triggers.add(String(result.error.context.trigger));
        if (result.type === "failed" || result.type === "lease_lost") {
          expect(describeResult(result), `sleep #${failAt}`).toContain(BROKEN);
        } else {
          // A deadline the call beat, or a cleanup deadline (then named in cleanupErrors); the run published once.
          expect(result.type, `sleep #${failAt}`).toBe("completed");
          expect(fixture.journal.of("fences.publish")).toHaveLength(1);
        }
      }
      // The loops' own waits (monitor, session-input sync) are among them, and lose the lease.
      expect(triggers).toContain("scheduler_failed");
    },
  );
});

describe("fault matrix: supervisor events after completed", () => {
  interface AfterCompleted {
    readonly name: string;
    readonly after: (side: SupervisorSide) => Promise<void>;
    readonly expected: "completed" | "failed";
    /** Text the result must contain. */
    readonly named?: string;
  }
  const rows: readonly (readonly [
    AfterCompleted["name"],
    AfterCompleted["after"],
    AfterCompleted["expected"],
    string?,
  ])[] = [
    [
      "error",
      (side) => side.emit({ type: "error", message: "flush failed" }),
      "failed",
      "flush failed",
    ],
    [
      "a second completed",
      (side) => side.emit({ type: "completed", exitCode: 0 }),
      "failed",
      "unexpected completed event while draining",
    ],
    [
      "ready",
      (side) => side.emit({ type: "ready", protocol: "openma-harness-supervisor-v1" }),
      "failed",
      "unexpected ready event while draining",
    ],
    ["a malformed line", (side) => side.raw("{oops\n"), "failed", "not JSON"],
    [
      "drained, then error",
      async (side) => {
        await side.emit({ type: "drained" });
        await side.emit({ type: "error", message: "too late to matter" });
      },
      "completed",
    ],
    [
      "heartbeats, then drained",
      async (side) => {
        await side.emit({ type: "heartbeat", sequence: 7 });
        await side.emit({ type: "drained" });
      },
      "completed",
    ],
    [
      "a checkpoint, then drained",
      async (side) => {
        await side.emit({
          type: "checkpoint",
          checkpointId: "late",
          sessionId: "ses-1",
        } satisfies HarnessSupervisorEvent);
        await until(side, "checkpoint.reject");
        await side.emit({ type: "drained" });
      },
      "completed",
    ],
    ["the end of the stream", (side) => side.end(), "completed"],
    ["nothing (drain times out)", async () => undefined, "completed"],
  ];

  const afterCompleted: readonly AfterCompleted[] = rows.map(([name, after, expected, named]) => ({
    name,
    after,
    expected,
    ...(named ? { named } : {}),
  }));

  it.each(afterCompleted)("$name", async ({ after, expected, named }) => {
    const transport = createScriptedSupervisorTransport(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      await side.emit({ type: "completed", exitCode: 0 });
      await until(side, "drain");
      await after(side);
    });
    const fixture = createHostFixture({
      harnessDriver: (time) =>
        createSupervisedSandboxHarnessDriver({ transport, clock: time, scheduler: time }),
    });
    const result = await fixture.run({ profile: supervisedProfile }, 250);
    expect(result.type).toBe(expected);
    if (named) expect(describeResult(result)).toContain(named);
    expect(fixture.journal.of("fences.publish")).toHaveLength(expected === "completed" ? 1 : 0);
    expect(transport.stdin()).not.toContain(tokensOf(fixture.journal)[0] ?? "no-token");
    await expectInvariants(fixture, result);
  });
});
