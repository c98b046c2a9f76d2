import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DoneTurn,
  type Fleet,
  fleetScale,
  isSalvageLine,
  startFleet,
} from "./support/fleet.js";
import {
  type FleetFindings,
  expectFleetInvariants,
  expectNothingLeftAfterReap,
} from "./support/fleet-invariants.js";
import type { LogLine, ServiceProcess } from "./support/service-stack.js";

// Each fault runs over sessions of its own on one fleet of four workers. The default run is scaled down for a
// shared 2-core machine (2 sessions of 3 turns per fault, 10 s read-only); `pnpm test:fleet` runs 5 sessions of 4
// turns per fault and 30 s read-only.
const scale = fleetScale();
const full = process.env.OMA_FLEET_FULL === "1";
const sessions = full ? 5 : 2;
const turns = full ? 4 : 3;
let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet(scale);
}, 600_000);

afterAll(async () => {
  await fleet?.close();
}, 600_000);

const isAcquired = (line: LogLine) =>
  line.event === "transaction.step" &&
  line.port === "sandbox" &&
  line.call === "acquire" &&
  line.result === "ok";

/** Items a worker process claimed and never reported done. */
const inHand = (child: ServiceProcess): string[] => {
  const done = new Set(
    child.lines.filter((line) => line.event === "work.done").map((line) => line.workId),
  );
  return child.lines
    .filter((line) => line.event === "work.claimed" && !done.has(line.workId))
    .map((line) => line.workId as string);
};

/** The next sandbox a worker process acquires from now on, waited for. */
const nextAcquire = (child: ServiceProcess): Promise<LogLine> => {
  const before = child.lines.length;
  return child.waitFor(
    "transaction.step",
    (line) => isAcquired(line) && child.lines.indexOf(line) >= before,
  );
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Items of `workIds` whose journal record is marked salvageable (their `ama_worker` harness started). */
const markedSalvageable = async (workIds: readonly string[]): Promise<string[]> =>
  (
    await fleet.admin.all<{ work_id: string }>(
      "SELECT work_id FROM sandbox_journal WHERE start_revision IS NOT NULL AND attempts = 0",
      [],
    )
  )
    .map((row) => row.work_id)
    .filter((workId) => workIds.includes(workId));

/**
 * The first salvage line of `workId` that settled it (not `held`), from any worker process: its reconciler's, or
 * the one of a run of the session that salvaged before restoring, whichever came first.
 */
const settledSalvage = async (workId: string): Promise<LogLine> => {
  const find = () =>
    fleet.lines().find((l) => isSalvageLine(l) && l.workId === workId && l.outcome !== "held");
  const deadline = Date.now() + 600_000;
  for (let found = find(); ; found = find()) {
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`nothing salvaged the abandoned run of ${workId}`);
    await sleep(500);
  }
};

const fenceOf = async (sessionId: string) =>
  (
    await fleet.admin.all<{ owner_id: string | null; generation: number }>(
      "SELECT owner_id, generation FROM runtime_resource_fences WHERE session_id = ?",
      [sessionId],
    )
  )[0];

const report = (fault: string, done: readonly DoneTurn[], findings: FleetFindings) =>
  console.info(
    `fleet fault ${fault}: ${done.length} turns, ${findings.unpublished.length} unpublished, ` +
      `${findings.salvaged.length} salvaged, ` +
      `${findings.reissued} re-issued, ${findings.deferred} deferred`,
  );

describe("a fleet of four workers on one Postgres store, under faults", () => {
  it("SIGKILL of a worker mid-harness: another worker salvages its turn", async () => {
    const plans = fleet.queueSessions(sessions, turns, { sleepSeconds: 3 });
    // The victim: the first worker found with an item whose harness started (its journal record marked
    // salvageable), whichever worker the platform handed it to.
    let index = -1;
    const deadline = Date.now() + 600_000;
    while (index < 0) {
      for (const [at, worker] of fleet.workers.entries())
        if (index < 0 && (await markedSalvageable(inHand(worker.process))).length > 0) index = at;
      if (index >= 0) break;
      if (Date.now() > deadline) throw new Error("no worker started a harness within 10 minutes");
      await sleep(200);
    }
    const victim = fleet.workers[index]?.process as ServiceProcess;
    const killed = inHand(victim);
    victim.child.kill("SIGKILL");
    await victim.exited;
    const abandoned = await markedSalvageable(killed);
    await fleet.restart(index);
    const done = await fleet.waitForTurns(plans);
    // Every abandoned run's record is salvaged before it is reaped; a salvage logs once it has published.
    const salvages = await Promise.all(abandoned.map(settledSalvage));
    const findings = await expectFleetInvariants(fleet, done, {
      concurrency: scale.concurrency,
      mayBeUnpublished: new Set(killed),
    });
    report("SIGKILL", done, findings);
    // The killed worker's turns were published after all: by another worker's reconciler or by the session's next
    // run before it restored, never by a re-run of the killed item.
    expect(salvages.map((line) => [line.workId, line.outcome])).toEqual(
      abandoned.map((workId) => [workId, "salvaged"]),
    );
    expect(salvages.every((line) => !victim.lines.includes(line))).toBe(true);
    expect(findings.salvaged.map(({ line }) => line.workId).sort()).toEqual([...abandoned].sort());
    expect(findings.unpublished).toEqual([]);
    await expectNothingLeftAfterReap(fleet);
  }, 1_800_000);

  it("SIGSTOP of a worker past its fence's expiry, then SIGCONT: it publishes nothing", async () => {
    let plans = fleet.queueSessions(sessions, turns, { sleepSeconds: 3 });
    const worker = fleet.workers[1];
    if (!worker) throw new Error("the fleet has no second worker");
    const victim = worker.process;
    const acquired = await nextAcquire(victim);
    victim.child.kill("SIGSTOP");
    const sessionId = acquired.sessionId as string;
    const stopped = inHand(victim);
    const held = await fenceOf(sessionId);
    try {
      expect(held?.owner_id).toBe(worker.ownerId);
      // One more turn on that session, so another worker comes for its fence once it expires.
      plans = plans.map((plan) =>
        plan.sessionId === sessionId ? fleet.extendSession(plan) : plan,
      );
      for (;;) {
        const fence = await fenceOf(sessionId);
        if ((fence?.generation ?? 0) > (held?.generation ?? 0)) break;
        await sleep(1_000);
      }
    } finally {
      victim.child.kill("SIGCONT");
    }
    const done = await fleet.waitForTurns(plans);
    const findings = await expectFleetInvariants(fleet, done, {
      concurrency: scale.concurrency,
      mayBeUnpublished: new Set(stopped),
    });
    // The stale holder published none of the items it held while stopped.
    const staleReports = victim.lines.filter(
      (line) => line.event === "work.done" && stopped.includes(line.workId as string),
    );
    expect(staleReports.length).toBeGreaterThan(0);
    expect(staleReports.filter((line) => line.outcome === "completed")).toEqual([]);
    report("SIGSTOP", done, findings);
    await expectNothingLeftAfterReap(fleet);
  }, 1_800_000);

  it("a Postgres restart mid-run: runs ride through it, every turn published once", async () => {
    const plans = fleet.queueSessions(sessions, turns, { sleepSeconds: 2 });
    await Promise.race(fleet.workers.map((worker) => nextAcquire(worker.process)));
    await fleet.postgres.stop();
    await sleep(3_000);
    await fleet.postgres.start();
    const done = await fleet.waitForTurns(plans);
    const findings = await expectFleetInvariants(fleet, done, { concurrency: scale.concurrency });
    expect(findings.unpublished).toEqual([]);
    report("Postgres restart", done, findings);
    await expectNothingLeftAfterReap(fleet);
  }, 1_800_000);

  it(`Postgres read-only for ${scale.readOnlyMs / 1000} s mid-run: every turn published once`, async () => {
    const plans = fleet.queueSessions(sessions, turns, { sleepSeconds: 2 });
    await Promise.race(fleet.workers.map((worker) => nextAcquire(worker.process)));
    await fleet.admin.run("ALTER SYSTEM SET default_transaction_read_only = on", []);
    await fleet.admin.all("SELECT pg_reload_conf()", []);
    try {
      await sleep(scale.readOnlyMs);
    } finally {
      await fleet.admin.run("ALTER SYSTEM RESET default_transaction_read_only", []);
      await fleet.admin.all("SELECT pg_reload_conf()", []);
    }
    const done = await fleet.waitForTurns(plans);
    const findings = await expectFleetInvariants(fleet, done, { concurrency: scale.concurrency });
    expect(findings.unpublished).toEqual([]);
    report("read-only", done, findings);
    await expectNothingLeftAfterReap(fleet);
  }, 1_800_000);
});
