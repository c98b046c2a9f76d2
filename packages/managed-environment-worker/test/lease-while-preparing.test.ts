import type { ControlPlaneEvent } from "@open-managed-agents/local-control-plane";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

/** Longer than the lease the ack starts (`defaultTtlSeconds`), so only a renewed lease outlasts it. */
const SLOW_RESTORE_MS = 8_000;

let stack: Stack;
let events: ControlPlaneEvent[];
beforeEach(async () => {
  events = [];
  stack = await startStack({ defaultTtlSeconds: 3, onEvent: (event) => events.push(event) });
});
afterEach(() => stack.close());

interface Beat {
  readonly workId: string;
  readonly status: number;
  readonly at: number;
}

/** The stack's client, recording each heartbeat this environment worker sends and how it was answered. */
function recordingClient(beats: Beat[]) {
  return stack.client.withOptions({
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const match = /\/work\/([^/]+)\/heartbeat$/.exec(url.pathname);
      if (match)
        beats.push({ workId: match[1] as string, status: response.status, at: Date.now() });
      return response;
    },
  });
}

/** A host whose workspace restore (a turn with an active checkpoint) takes {@link SLOW_RESTORE_MS}. */
function slowRestoreHost(restores: { count: number }, only?: number) {
  return stack.hostFactory((ports) => ({
    ...ports,
    workspace: {
      ...ports.workspace,
      materialize: async (input) => {
        if (input.activeCheckpoint !== null) {
          restores.count += 1;
          if (only === undefined || restores.count === only)
            await new Promise((resolve) => setTimeout(resolve, SLOW_RESTORE_MS));
        }
        return ports.workspace.materialize(input);
      },
    },
  }));
}

/** Two turns of one session: the first writes a file, the second reads it after the slow restore. */
function queueTwoTurns() {
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "echo kept-across-turns > kept.txt" } }],
  });
  return {
    session,
    second: () =>
      stack.plane.queueTurn(session.id, {
        toolCalls: [{ name: "bash", input: { command: "cat kept.txt" } }],
      }),
  };
}

describe("ama_worker lane: the Work lease while the sandbox is prepared", () => {
  it("keeps an item whose restore outlasts the ack's lease, and hands the lease to the in-sandbox worker", async () => {
    const beats: Beat[] = [];
    const restores = { count: 0 };
    const worker = await stack.worker({
      client: recordingClient(beats),
      host: slowRestoreHost(restores),
      heartbeatIntervalMs: 1_000,
      heartbeatTtlSeconds: 30,
    });
    const { session, second } = queueTwoTurns();
    await worker.drain();
    second();
    await worker.drain();

    const reports = await stack.reportsAfter(2);
    for (const report of reports)
      expect(report.outcome.type === "ran" && report.outcome.result.type).toBe("completed");
    expect(restores.count).toBe(1);
    const workId = reports[1]?.workId as string;
    // The slow restore's item was never issued again, and no heartbeat of anyone was refused.
    expect(
      events.filter((event) => event.type === "work_queued" && event.reason === "lease_expired"),
    ).toEqual([]);
    expect(events.filter((event) => event.type === "heartbeat_refused")).toEqual([]);
    expect(
      events.filter((event) => event.type === "work_claimed" && event.workId === workId),
    ).toHaveLength(1);
    // This worker renewed the lease through the restore (at least one renewal per 3 s lease) and then stopped.
    const mine = beats.filter((beat) => beat.workId === workId);
    expect(mine.length).toBeGreaterThanOrEqual(SLOW_RESTORE_MS / 3_000);
    expect(mine.every((beat) => beat.status === 200)).toBe(true);
    expect(stack.logs.filter((entry) => entry.event === "work.lease_handed_over")).toHaveLength(2);
    // The in-sandbox worker heartbeated after this worker's last renewal (its first one continued the chain,
    // or it would have been refused above) and stopped the item itself.
    const item = stack.plane.workItems(stack.environment.id).find((work) => work.id === workId);
    expect(Date.parse(item?.latest_heartbeat_at ?? "")).toBeGreaterThan(
      Math.max(...mine.map((beat) => beat.at)) - 1_000,
    );
    expect(item?.state).toBe("stopped");
    expect(JSON.stringify(stack.plane.transcript(session.id))).toContain("kept-across-turns");
  });

  it("without it, the same restore loses the item to the ack's lease and the platform issues it again", async () => {
    const restores = { count: 0 };
    const worker = await stack.worker({
      host: slowRestoreHost(restores, 1),
      leaseWhilePreparing: false,
    });
    const { session, second } = queueTwoTurns();
    await worker.drain();
    second();
    while (!stack.reports.some((report, index) => index > 0 && completed(report))) {
      await worker.drain();
    }
    const workId = stack.reports[1]?.workId as string;
    expect(
      events.filter(
        (event) =>
          event.type === "work_queued" &&
          event.reason === "lease_expired" &&
          event.workId === workId,
      ).length,
    ).toBeGreaterThanOrEqual(1);
    expect(restores.count).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(stack.plane.transcript(session.id))).toContain("kept-across-turns");
  });
});

function completed(report: Stack["reports"][number]): boolean {
  return report.outcome.type === "ran" && report.outcome.result.type === "completed";
}
