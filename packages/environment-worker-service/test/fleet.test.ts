import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, fleetScale, startFleet } from "./support/fleet.js";
import { expectFleetInvariants, expectNothingLeftAfterReap } from "./support/fleet-invariants.js";

// The default run is scaled down for a shared 2-core machine (4 sessions of 2 turns: 8 items over 4 workers);
// `pnpm test:fleet` runs the full size (20 sessions of 5 turns: 100 items).
const scale = fleetScale();
let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet(scale);
}, 600_000);

afterAll(async () => {
  await fleet?.close();
}, 600_000);

describe(`a fleet of ${scale.workers} workers on one Postgres store`, () => {
  it(`runs ${scale.sessions * scale.turns} items over ${scale.sessions} sessions, each on the last published workspace`, async () => {
    const plans = fleet.queueSessions(scale.sessions, scale.turns);
    const done = await fleet.waitForTurns(plans);
    const findings = await expectFleetInvariants(fleet, done, { concurrency: scale.concurrency });
    expect(findings.unpublished).toEqual([]);
    // The work spread over the fleet: more than one worker published.
    const publishers = new Set(
      fleet.workers.filter((worker) =>
        worker.process.lines.some(
          (line) => line.event === "work.done" && line.outcome === "completed",
        ),
      ),
    );
    expect(publishers.size).toBeGreaterThan(1);
    await expectNothingLeftAfterReap(fleet);
    console.info(
      `fleet: ${done.length} turns, ${findings.reissued} re-issued, ${findings.deferred} deferred, ` +
        `${publishers.size} workers published`,
    );
  }, 1_800_000);
});
