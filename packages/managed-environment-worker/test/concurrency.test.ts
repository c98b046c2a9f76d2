import { afterEach, beforeEach, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it.each([1, 2])(
  "runs at most %i items at once and claims only while a slot is free",
  async (concurrency) => {
    let running = 0;
    let peak = 0;
    // The stack's host, wrapped so the test sees how many runs overlap.
    const hostOf = stack.hostFactory();
    const worker = await stack.worker({
      concurrency,
      async host(input) {
        const host = await hostOf(input);
        return {
          async run(runInput) {
            running += 1;
            peak = Math.max(peak, running);
            try {
              return await host.run(runInput);
            } finally {
              running -= 1;
            }
          },
        };
      },
    });
    for (let index = 0; index < 3; index += 1) {
      const session = stack.plane.createSession({ environmentId: stack.environment.id });
      stack.plane.queueTurn(session.id, {
        toolCalls: [{ name: "bash", input: { command: "sleep 0.5" } }],
      });
    }
    let claimed = 0;
    while (claimed < 3) claimed += (await worker.drain()).claimed;
    expect(peak).toBe(concurrency);
    expect(
      stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
    ).toEqual(["completed", "completed", "completed"]);
  },
);

it("holds the bound while the long poll and drains claim at the same time", async () => {
  let running = 0;
  let peak = 0;
  const hostOf = stack.hostFactory();
  const worker = await stack.worker({
    concurrency: 1,
    fallbackPollIntervalMs: 200,
    async host(input) {
      const host = await hostOf(input);
      return {
        async run(runInput) {
          running += 1;
          peak = Math.max(peak, running);
          try {
            return await host.run(runInput);
          } finally {
            running -= 1;
          }
        },
      };
    },
  });
  const stop = new AbortController();
  const runs = worker.run(stop.signal);
  for (let index = 0; index < 4; index += 1) {
    const session = stack.plane.createSession({ environmentId: stack.environment.id });
    stack.plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "sleep 0.3" } }],
    });
  }
  // Webhook-style drains on top of the long poll and the fallback drain, while items arrive.
  const drains: Promise<unknown>[] = [];
  while (stack.reports.length < 4) {
    drains.push(worker.drain());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop.abort();
  await runs;
  await Promise.allSettled(drains);
  expect(peak).toBe(1);
  expect(
    stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed", "completed", "completed", "completed"]);
});
