import type { RuntimeResourceFencePort } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, beforeEach, expect, it } from "vitest";
import { publicationOf } from "./support/publication.js";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it("runs two turns queued back to back in order, the second on the first one's published workspace", async () => {
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  const first = stack.plane.queueTurn(session.id, {
    toolCalls: [
      {
        name: "write",
        input: { file_path: "/workspace/turn-1.txt", content: "written by turn 1" },
      },
      { name: "bash", input: { command: "mkdir -p data && seq 1 5 > data/numbers" } },
    ],
  });
  const second = stack.plane.queueTurn(session.id, {
    toolCalls: [
      { name: "bash", input: { command: "cat /workspace/turn-1.txt && wc -l < data/numbers" } },
    ],
  });
  const controller = new AbortController();
  const worker = await stack.worker({ concurrency: 2, fallbackPollIntervalMs: 500 });
  const running = worker.run(controller.signal);
  const reports = await stack.reportsAfter(2);
  controller.abort();
  await running;

  // The in-sandbox worker stops turn 1's item before the host has published, so turn 2's item can be
  // claimed while turn 1 still holds the session fence: it meets `conflict` and is retried, never dropped.
  expect(reports.map((report) => report.workId)).toEqual([first.work_ids[0], expect.any(String)]);
  expect(
    reports.map((report) =>
      report.outcome.type === "ran" ? report.outcome.result.type : report.outcome.type,
    ),
  ).toEqual(["completed", "completed"]);
  const revisions = reports.map((report) =>
    report.outcome.type === "ran" && report.outcome.result.type === "completed"
      ? report.outcome.result.revision
      : null,
  );
  expect(revisions).toEqual([1, 2]);
  const secondTurn = await stack.plane.waitForTurn(session.id, second.id);
  expect(secondTurn.state).toBe("done");
  const result = JSON.stringify(stack.plane.transcript(session.id).entries.at(-1)?.result?.content);
  expect(result).toContain("written by turn 1");
  expect(result).toContain("5");
  const publication = await publicationOf(stack.fences, {
    workspaceId: "ws_test",
    environmentId: stack.environment.id,
    sessionId: session.id,
  });
  expect(publication?.revision).toBe(2);
  // Every item ended stopped: none was dropped or left for reclaim.
  expect(
    stack.plane.workItems(stack.environment.id).every((item) => item.state === "stopped"),
  ).toBe(true);
});

it("retries an item that met conflict once the previous turn publishes, and never runs it on a stale workspace", async () => {
  // Turn 1's publish waits until turn 2 has met the held fence, so the conflict path runs every time.
  let conflicts = 0;
  let sawConflict: () => void = () => undefined;
  const conflictSeen = new Promise<void>((resolve) => {
    sawConflict = resolve;
  });
  const fences: RuntimeResourceFencePort = {
    ...stack.fences,
    async acquire(input) {
      const result = await stack.fences.acquire(input);
      if (result.type === "conflict") {
        conflicts += 1;
        sawConflict();
      }
      return result;
    },
    async publish(input) {
      await conflictSeen;
      return stack.fences.publish(input);
    },
  };
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  for (let turn = 1; turn <= 2; turn += 1) {
    stack.plane.queueTurn(session.id, {
      toolCalls: [
        {
          name: "bash",
          input: { command: `echo ${turn} >> /workspace/turns && cat /workspace/turns` },
        },
      ],
    });
  }
  const controller = new AbortController();
  const worker = await stack.worker({ concurrency: 2, fallbackPollIntervalMs: 500 }, fences);
  const running = worker.run(controller.signal);
  const reports = await stack.reportsAfter(2);
  controller.abort();
  await running;
  expect(conflicts).toBeGreaterThanOrEqual(1);
  expect(
    reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed", "completed"]);
  expect(
    reports.map((report) => (report.outcome.type === "ran" ? report.outcome.attempts : 0))[1],
  ).toBeGreaterThan(1);
  // Turn 2 saw turn 1's line: it ran on the published workspace, not on the one before it.
  expect(
    JSON.stringify(stack.plane.transcript(session.id).entries.at(-1)?.result?.content),
  ).toContain("1\\n2");
});
