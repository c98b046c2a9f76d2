import { afterEach, expect, it } from "vitest";
import type { ManagedRuntimeHost } from "@open-managed-agents/managed-runtime-host";
import { publicationOf } from "./support/publication.js";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack | undefined;
afterEach(() => stack?.close());

it("leaves an item reclaimable when the worker dies between claim and acquire", async () => {
  // The control plane's clock, advanced by hand so the lease from ack expires exactly when the test says.
  let offsetMs = 0;
  stack = await startStack({ clock: () => Date.now() + offsetMs });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [
      {
        name: "bash",
        input: { command: "echo survived > /workspace/after-crash && cat /workspace/after-crash" },
      },
    ],
  });

  // Worker A claims and acks, then "dies" while building its host: no fence, no sandbox, no stop.
  let claimed: (workId: string) => void = () => undefined;
  const claimedId = new Promise<string>((resolve) => {
    claimed = resolve;
  });
  let revive: (error: Error) => void = () => undefined;
  const crashed = await stack.worker({
    host: ({ scope }) => {
      claimed(scope.workId);
      return new Promise<ManagedRuntimeHost>((_resolve, reject) => {
        revive = reject;
      });
    },
  });
  const zombie = crashed.drain();
  const workId = await claimedId;
  expect(
    stack.plane.workItems(stack.environment.id).find((item) => item.id === workId)?.state,
  ).toBe("starting");

  // Its lease from ack runs out; the item goes back to the queue with a new secret.
  offsetMs += 10 * 60 * 1000;
  const healthy = await stack.worker();
  expect(await healthy.drain()).toEqual({ claimed: 1 });
  const report = stack.reports.find((candidate) => candidate.outcome.type === "ran");
  expect(report?.workId).toBe(workId);
  expect(report?.outcome.type === "ran" && report.outcome.result.type).toBe("completed");
  expect(JSON.stringify(stack.plane.transcript(session.id).entries[0]?.result?.content)).toContain(
    "survived",
  );
  expect(
    (
      await publicationOf(stack.fences, {
        workspaceId: "ws_test",
        environmentId: stack.environment.id,
        sessionId: session.id,
      })
    )?.revision,
  ).toBe(1);

  // The dead worker wakes up: its item is gone (old sessions token revoked); nothing it does changes the result.
  revive(new Error("host construction failed after the crash"));
  await zombie;
  expect(
    stack.plane.workItems(stack.environment.id).find((item) => item.id === workId)?.state,
  ).toBe("stopped");
  expect(
    (
      await publicationOf(stack.fences, {
        workspaceId: "ws_test",
        environmentId: stack.environment.id,
        sessionId: session.id,
      })
    )?.revision,
  ).toBe(1);
});

it("keeps going after a bad item: the profile refusal is reported, the item stopped, the next item run", async () => {
  const current = await startStack();
  stack = current;
  const bad = stack.plane.createSession({
    environmentId: stack.environment.id,
    metadata: { kind: "bad" },
  });
  const good = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(bad.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  stack.plane.queueTurn(good.id, {
    toolCalls: [{ name: "bash", input: { command: "echo fine" } }],
  });
  const worker = await stack.worker({
    concurrency: 2,
    profileFor: (_work, session) =>
      session.metadata.kind === "bad"
        ? ({ driver: { type: "nonsense" } } as never)
        : defaultProfile(current.binDirectory),
  });
  await worker.drain();
  const outcomes = Object.fromEntries(
    stack.reports.map((report) => [report.scope?.sessionId, report.outcome]),
  );
  expect(outcomes[bad.id]?.type).toBe("rejected");
  if (outcomes[bad.id]?.type === "rejected")
    expect(outcomes[bad.id]).toMatchObject({ error: { code: "invalid_request" } });
  expect(outcomes[good.id]).toMatchObject({ type: "ran", result: { type: "completed" } });
  const states = new Map(
    stack.plane.workItems(stack.environment.id).map((item) => [item.id, item.state]),
  );
  // The control plane queues a fresh item for the unfinished turn; each item this worker refused was stopped.
  expect(stack.reports.length).toBeGreaterThanOrEqual(2);
  expect(stack.reports.every((report) => states.get(report.workId) === "stopped")).toBe(true);
});

it("shuts down gracefully: stops claiming, and aborts a run still going at the deadline as lease_lost", async () => {
  stack = await startStack();
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "sleep 120" } }],
  });
  const controller = new AbortController();
  const worker = await stack.worker({ shutdownGraceMs: 500 });
  const running = worker.run(controller.signal);
  // The in-sandbox worker's first heartbeat makes the item active: the harness is running the bash call.
  while (stack.plane.workItems(stack.environment.id)[0]?.state !== "active")
    await new Promise((resolve) => setTimeout(resolve, 100));
  controller.abort();
  await running;
  const [report] = stack.reports;
  expect(report?.outcome.type === "ran" && report.outcome.result.type).toBe("lease_lost");
  expect(stack.logs.some((entry) => entry.event === "worker.shutdown_aborting")).toBe(true);
  expect(
    await publicationOf(stack.fences, {
      workspaceId: "ws_test",
      environmentId: stack.environment.id,
      sessionId: session.id,
    }),
  ).toBeNull();
});

function defaultProfile(binDirectory: string) {
  return {
    workspace: { requirement: "durable" as const },
    outputs: { requirement: "disabled" as const },
    runtimeCheckpoint: "disabled" as const,
    driver: {
      type: "ama_worker" as const,
      process: {
        command: "oma-ama-worker",
        env: { PATH: `${binDirectory}:/usr/bin:/bin`, OMA_AMA_MAX_IDLE_MS: "400" },
      },
    },
  };
}

it("answers a drain with unauthorized when the Work API refuses the environment key, never echoing it", async () => {
  stack = await startStack();
  const worker = await stack.worker({ environmentKey: "not-the-environment-key" });
  const error = await worker.drain().then(
    () => null,
    (caught: unknown) => caught as { code?: string; message?: string },
  );
  expect(error?.code).toBe("unauthorized");
  expect(error?.message).not.toContain("not-the-environment-key");
});
