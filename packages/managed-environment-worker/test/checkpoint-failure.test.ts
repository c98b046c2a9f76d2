import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, beforeEach, expect, it } from "vitest";
import { publicationOf } from "./support/publication.js";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it("reports a checkpoint failure after the in-sandbox stop; the next turn restores the previous checkpoint", async () => {
  const worker = await stack.worker({
    // The second item's workspace checkpoint fails, after the AMA worker has already stopped it.
    host: stack.hostFactory((ports, item) =>
      item === 2
        ? {
            ...ports,
            workspace: {
              ...ports.workspace,
              checkpoint: async () =>
                Promise.reject(
                  new SandboxFailedError({ message: "checkpoint storage unavailable" }),
                ),
            },
          }
        : ports,
    ),
  });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "echo kept > /workspace/turn-1" } }],
  });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "echo lost > /workspace/turn-2" } }],
  });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "ls /workspace" } }],
  });
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  const reports = await stack.reportsAfter(3);
  controller.abort();
  await running;

  const results = reports.map((report) =>
    report.outcome.type === "ran" ? report.outcome.result : null,
  );
  expect(results.map((result) => result?.type)).toEqual(["completed", "failed", "completed"]);
  const failed = results[1];
  if (failed?.type === "failed") expect(failed.error.context.stage).toBe("workspace-checkpoint");
  // The platform saw turn 2 finish (its item was stopped by the AMA worker), but its files were not published.
  expect(
    stack.plane
      .workItems(stack.environment.id)
      .find((candidate) => candidate.id === reports[1]?.workId)?.state,
  ).toBe("stopped");
  const listing = JSON.stringify(
    stack.plane.transcript(session.id).entries.at(-1)?.result?.content,
  );
  expect(listing).toContain("turn-1");
  expect(listing).not.toContain("turn-2");
  expect(
    (
      await publicationOf(stack.fences, {
        workspaceId: "ws_test",
        environmentId: stack.environment.id,
        sessionId: session.id,
      })
    )?.revision,
  ).toBe(2);
});
