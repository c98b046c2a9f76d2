import {
  InsufficientCapacityError,
  StorageUnwritableError,
} from "@open-managed-agents/runtime-resource-contract";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  // A short lease, so an item left unstopped is issued again within the test.
  stack = await startStack({ defaultTtlSeconds: 2 });
});
afterEach(() => stack.close());

it("leaves an item to the platform when the driver has no sandbox, and the re-issued item completes", async () => {
  let refused = 0;
  const hostOf = stack.hostFactory((ports, item) => ({
    ...ports,
    sandbox: {
      ...ports.sandbox,
      acquire: async (input) => {
        if (item === 1) {
          refused += 1;
          throw new InsufficientCapacityError({
            message: "no sandbox free (the driver's limit is reached)",
          });
        }
        return ports.sandbox.acquire(input);
      },
    },
  }));
  const worker = await stack.worker({ host: hostOf, capacityBackoffMs: 100 });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "echo ran > ran.txt" } }],
  });

  await worker.drain();
  const [first] = await stack.reportsAfter(1);
  expect(refused).toBe(1);
  expect(first?.outcome).toEqual({
    type: "deferred",
    reason: "insufficient_capacity",
    attempts: 1,
  });
  // Not stopped, not failed: the platform still holds it under the 1 s lease this worker's last renewal asked
  // for, and issues it again when that lapses.
  const [item] = stack.plane.workItems(stack.environment.id);
  expect(item?.state).toBe("active");
  expect(item?.stopped_at).toBeNull();
  expect(stack.logs.some((entry) => entry.event === "work.stopped")).toBe(false);
  // Nothing was acquired, so nothing is journaled, orphaned or published.
  expect(await stack.orphans.list({ limit: 10 })).toEqual([]);

  while (stack.reports.length < 2) await worker.drain();
  const second = stack.reports[1];
  expect(second?.workId).toBe(first?.workId);
  expect(second?.outcome.type === "ran" && second.outcome.result.type).toBe("completed");
  expect(JSON.stringify(stack.plane.transcript(session.id))).toContain("echo ran > ran.txt");
});

it("fails an item whose insufficient_capacity came after the sandbox ran (a full checkpoint store)", async () => {
  const hostOf = stack.hostFactory((ports) => ({
    ...ports,
    workspace: {
      ...ports.workspace,
      checkpoint: async () => {
        throw new InsufficientCapacityError({ message: "the checkpoint store is full" });
      },
    },
  }));
  const worker = await stack.worker({ host: hostOf, capacityBackoffMs: 100 });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  await worker.drain();
  const [report] = await stack.reportsAfter(1);
  expect(report?.outcome.type).toBe("ran");
  expect(report?.outcome.type === "ran" && report.outcome.result.type).toBe("failed");
});

it("leaves an item to the platform when the fence store refuses the fence (read-only), and it completes later", async () => {
  const hostOf = stack.hostFactory((ports, item) => ({
    ...ports,
    fences: {
      ...ports.fences,
      acquire: async (input) => {
        if (item === 1)
          throw new StorageUnwritableError({
            message: "the database is read-only",
            context: { busy: true },
          });
        return ports.fences.acquire(input);
      },
    },
  }));
  const worker = await stack.worker({ host: hostOf, capacityBackoffMs: 100 });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  await worker.drain();
  const [first] = await stack.reportsAfter(1);
  expect(first?.outcome).toEqual({ type: "deferred", reason: "store_unavailable", attempts: 1 });
  expect(stack.plane.workItems(stack.environment.id)[0]?.state).toBe("active");
  while (stack.reports.length < 2) await worker.drain();
  const second = stack.reports[1];
  expect(second?.workId).toBe(first?.workId);
  expect(second?.outcome.type === "ran" && second.outcome.result.type).toBe("completed");
});
