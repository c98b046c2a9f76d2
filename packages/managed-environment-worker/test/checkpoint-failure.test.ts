import { createManagedRuntimeHost, createManagedRuntimeProviderRegistry } from "@open-managed-agents/managed-runtime-host";
import { REFERENCE_PROVIDER } from "@open-managed-agents/managed-runtime-conformance/testing";
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
  const registry = createManagedRuntimeProviderRegistry({ drivers: [stack.driver] });
  let item = 0;
  const worker = await stack.worker({
    // The second item's workspace checkpoint fails, after the AMA worker has already stopped it.
    async host({ scope, profile }) {
      item += 1;
      const failing = item === 2;
      const { resources } = await registry.prepare({ provider: REFERENCE_PROVIDER, placement: "in_process", scope, profile, providerConfig: {} });
      const { supervisorTransport: _transport, ...ports } = resources;
      const workspace = failing
        ? { ...ports.workspace, checkpoint: async () => Promise.reject(new SandboxFailedError({ message: "checkpoint storage unavailable" })) }
        : ports.workspace;
      return createManagedRuntimeHost({ ownerId: "checkpoint-test", leaseTtlMs: 60_000, heartbeatIntervalMs: 5_000, fences: stack.fences, orphans: stack.orphans, ...ports, workspace });
    },
  });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "echo kept > /workspace/turn-1" } }] });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "echo lost > /workspace/turn-2" } }] });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "ls /workspace" } }] });
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  const reports = await stack.reportsAfter(3);
  controller.abort();
  await running;

  const results = reports.map((report) => (report.outcome.type === "ran" ? report.outcome.result : null));
  expect(results.map((result) => result?.type)).toEqual(["completed", "failed", "completed"]);
  const failed = results[1];
  if (failed?.type === "failed") expect(failed.error.context.stage).toBe("workspace-checkpoint");
  // The platform saw turn 2 finish (its item was stopped by the AMA worker), but its files were not published.
  expect(stack.plane.workItems(stack.environment.id).find((candidate) => candidate.id === reports[1]?.workId)?.state).toBe("stopped");
  const listing = JSON.stringify(stack.plane.transcript(session.id).entries.at(-1)?.result?.content);
  expect(listing).toContain("turn-1");
  expect(listing).not.toContain("turn-2");
  expect((await publicationOf(stack.fences, { workspaceId: "ws_test", environmentId: stack.environment.id, sessionId: session.id }))?.revision).toBe(2);
});
