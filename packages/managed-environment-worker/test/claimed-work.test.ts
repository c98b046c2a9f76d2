import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

const completed = (report: { outcome: { type: string; result?: { type: string } } }) =>
  report.outcome.type === "ran" && report.outcome.result?.type;

describe("claimed work through the environment worker, the host and the in-sandbox AMA worker", () => {
  it("claims, runs the agent's tool calls in /workspace, publishes and stops the item", async () => {
    const session = stack.plane.createSession({ environmentId: stack.environment.id });
    const turn = stack.plane.queueTurn(session.id, {
      message: "write a file",
      toolCalls: [
        { name: "bash", input: { command: "pwd && echo first-turn > notes.txt && uname -s" } },
        { name: "read", input: { file_path: "/workspace/notes.txt" } },
      ],
      finalMessage: "done",
    });
    const worker = await stack.worker();
    expect(await worker.drain()).toEqual({ claimed: 1 });

    const [report] = stack.reports;
    expect(report?.scope).toEqual({
      workspaceId: "ws_test",
      environmentId: stack.environment.id,
      sessionId: session.id,
      workId: turn.work_ids[0],
    });
    expect(report?.lane).toBe("ama_worker");
    expect(report && completed(report)).toBe("completed");
    expect(
      report?.outcome.type === "ran" &&
        report.outcome.result.type === "completed" &&
        report.outcome.result.revision,
    ).toBe(1);

    const entries = stack.plane.transcript(session.id).entries;
    expect(entries.map((entry) => entry.name)).toEqual(["bash", "read"]);
    const text = (index: number) => JSON.stringify(entries[index]?.result?.content ?? null);
    expect(text(0)).toContain("/workspace");
    expect(text(1)).toContain("first-turn");
    expect(stack.plane.workItems(stack.environment.id).map((item) => item.state)).toEqual([
      "stopped",
    ]);
    // The host released the session fence after publishing.
    expect(
      stack.logs.some(
        (entry) => entry.event === "work.run_result" && entry.fields.result === "completed",
      ),
    ).toBe(true);
  });

  it("stops a health check without running anything", async () => {
    const { workId } = stack.plane.queueHealthcheck(stack.environment.id);
    const worker = await stack.worker();
    await worker.drain();
    expect(stack.reports).toEqual([
      { workId, scope: null, lane: null, outcome: { type: "skipped", reason: "healthcheck" } },
    ]);
    expect(
      stack.plane.workItems(stack.environment.id).find((item) => item.id === workId)?.state,
    ).toBe("stopped");
  });
});
