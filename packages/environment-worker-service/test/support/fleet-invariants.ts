import { expect } from "vitest";
import {
  type DoneTurn,
  type Fleet,
  doneLines,
  isSalvageLine,
  peakInFlight,
  salvageLines,
  turnsSeen,
} from "./fleet.js";
import type { LogLine } from "./service-stack.js";

/** What {@link expectFleetInvariants} found, for the report and for later assertions (salvage). */
export interface FleetFindings {
  /** Turns whose work ran on the platform but whose workspace no worker published (a worker died under it). */
  readonly unpublished: readonly DoneTurn[];
  /** Items some worker reported deferred (no sandbox, store down, conflicts) before one completed them. */
  readonly deferred: number;
  /** Items issued more than once by the platform. */
  readonly reissued: number;
  /**
   * Turns published for a worker that died under them, by a reconciler (`reconciler.salvage`) or by the next
   * run of the session before it restored (`sandbox.salvage`).
   */
  readonly salvaged: readonly { readonly turn: DoneTurn; readonly line: LogLine }[];
}

/**
 * The fleet's guarantees over the turns of `done`:
 * - every item the platform issued for them is stopped, and every turn's tool result reached the session;
 * - one publish per turn by a run at most, one salvage at most, and a run after a salvage only on top of it;
 * - per session, the revisions of the publishes strictly increase in the order workers reported them, no
 *   revision or generation is published twice, no item is published twice, and the fence row's revision in
 *   Postgres is the number of publishes the workers reported (nothing published that nobody reported);
 *   a publish is a `work.done` line of outcome `completed`, or a salvage line (`reconciler.salvage` or a run's
 *   `sandbox.salvage`) of outcome `salvaged` (a salvage publishes the dead worker's item, which never reports done);
 * - each turn found exactly the markers of the session's earlier published turns in its workspace, in order;
 * - no worker process ran more items at once than its concurrency.
 * Turns in `mayBeUnpublished` (their worker was killed or stopped) may be left unpublished; every other turn was
 * published exactly once, by one of its items or by a salvage of one.
 */
export async function expectFleetInvariants(
  fleet: Fleet,
  done: readonly DoneTurn[],
  options: { readonly concurrency: number; readonly mayBeUnpublished?: ReadonlySet<string> },
): Promise<FleetFindings> {
  const lines = doneLines(fleet.lines());
  const salvages = salvageLines(fleet.lines()).filter((line) => line.outcome === "salvaged");
  // Every publish, by a run or by a salvage, in the order it was logged.
  const publishes = [...lines.filter((line) => line.outcome === "completed"), ...salvages].sort(
    (a, b) => String(a.time).localeCompare(String(b.time)),
  );
  const salvaged: { turn: DoneTurn; line: LogLine }[] = [];
  const items = new Map(
    fleet.stack.plane.workItems(fleet.stack.environment.id).map((item) => [item.id, item]),
  );
  const unpublished: DoneTurn[] = [];
  const bySession = new Map<string, DoneTurn[]>();
  let deferred = 0;
  let reissued = 0;
  for (const turn of done) {
    bySession.set(turn.sessionId, [...(bySession.get(turn.sessionId) ?? []), turn]);
    for (const workId of turn.workIds)
      expect(items.get(workId)?.state, `item ${workId}`).toBe("stopped");
    const reports = lines.filter((line) => turn.workIds.includes(line.workId as string));
    const completed = publishes.filter((line) => turn.workIds.includes(line.workId as string));
    for (const line of salvages)
      if (turn.workIds.includes(line.workId as string)) salvaged.push({ turn, line });
    deferred += reports.filter((line) => line.outcome === "deferred").length;
    if (turn.workIds.length > 1 || reports.length > 1) reissued += 1;
    // One publish per turn by a run at most: the items of one turn never both publish. A salvage of a killed
    // run is a publish too: one at most, and a run of the turn after it only if that run started from it (the
    // platform issues a killed run's item again, and that run restores the salvaged revision).
    const byRun = completed.filter((line) => line.event === "work.done");
    const bySalvage = completed.filter(isSalvageLine);
    expect(byRun.length, `publishes of turn ${turn.turn} of ${turn.sessionId}`).toBeLessThanOrEqual(
      1,
    );
    expect(
      bySalvage.length,
      `salvages of turn ${turn.turn} of ${turn.sessionId}`,
    ).toBeLessThanOrEqual(1);
    if (byRun[0] && bySalvage[0])
      expect(
        byRun[0].revision,
        `the run after the salvage of turn ${turn.turn} of ${turn.sessionId}`,
      ).toBe((bySalvage[0].revision as number) + 1);
    if (completed.length === 0) {
      expect(
        turn.workIds.some((workId) => options.mayBeUnpublished?.has(workId)),
        `turn ${turn.turn} of ${turn.sessionId} (${turn.workIds.join(", ")}) was not published`,
      ).toBe(true);
      unpublished.push(turn);
    }
  }
  for (const [sessionId, turns] of bySession) {
    const published = publishes.filter((line) => line.sessionId === sessionId);
    const revisions = published.map((line) => line.revision as number);
    expect(revisions, `revisions of ${sessionId}`).toEqual([...revisions].sort((a, b) => a - b));
    expect(new Set(revisions).size, `revisions of ${sessionId}`).toBe(revisions.length);
    const generations = published.map((line) => line.generation as number);
    expect(new Set(generations).size, `generations of ${sessionId}`).toBe(generations.length);
    const [row] = await fleet.admin.all<{ revision: number }>(
      "SELECT revision FROM runtime_resource_fences WHERE session_id = ?",
      [sessionId],
    );
    // Salvages included: nothing published that no run and no reconciler reported.
    expect(row?.revision ?? 0, `the fence row of ${sessionId}`).toBe(published.length);
    // What each turn's workspace held: every earlier turn that was published, once, in order.
    const seen = turnsSeen(fleet.stack, sessionId);
    const lost = new Set(
      unpublished.filter((turn) => turn.sessionId === sessionId).map((turn) => turn.turn),
    );
    for (const turn of turns) {
      const expected = turns
        .filter((earlier) => earlier.turn < turn.turn && !lost.has(earlier.turn))
        .map((earlier) => `T${earlier.turn}`);
      expect(seen.get(turn.turn), `what turn ${turn.turn} of ${sessionId} found`).toEqual(expected);
    }
  }
  for (const worker of fleet.workers)
    for (const child of worker.incarnations)
      expect(peakInFlight(child.lines), `items at once in ${worker.name}`).toBeLessThanOrEqual(
        options.concurrency,
      );
  return { unpublished, deferred, reissued, salvaged };
}

/**
 * One reconciler pass over the shared store (the operator CLI's `orphans --reap`, as an operator would run it
 * from any machine), then: no sandbox left on the local stack, no orphan or journal record left.
 */
export async function expectNothingLeftAfterReap(fleet: Fleet): Promise<void> {
  const reap = await fleet.stack.run(["orphans", "--reap", "--json"], {
    OMA_STORE: fleet.postgres.url,
  });
  expect(reap.code, reap.stderr).toBe(0);
  // The bridge answers a delete before its container has stopped: the list empties soon after, with no new pass.
  const containers = () =>
    fleet.stack.bridge.containerServer.containers.list().map((container) => container.id);
  for (const deadline = Date.now() + 60_000; containers().length > 0 && Date.now() < deadline; )
    await new Promise((resolve) => setTimeout(resolve, 500));
  expect(containers()).toEqual([]);
  const listed = JSON.parse(
    (await fleet.stack.run(["orphans", "--json"], { OMA_STORE: fleet.postgres.url })).stdout,
  ) as { orphans: unknown[]; journal: unknown[] };
  expect(listed).toEqual({ orphans: [], journal: [] });
}
