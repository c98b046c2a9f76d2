import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { secretRecordingClient } from "./support/secret-recorder.js";
import { type Stack, amaWorkerProfile, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it("gives an agent's tool call no credential of the worker: not in any process's environment or command line, not on disk", async () => {
  const { client, secrets } = secretRecordingClient(stack);
  const worker = await stack.worker({
    client,
    profileFor: () => amaWorkerProfile(stack.binDirectory),
  });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  const probe = await readFile(
    join(import.meta.dirname, "hostile", "credential-probes.sh"),
    "utf8",
  );
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: probe } }] });
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  await stack.reportsAfter(1);
  controller.abort();
  await running;

  expect(
    stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed"]);
  const found = JSON.stringify(
    stack.plane.transcript(session.id).entries.map((entry) => entry.result?.content ?? []),
  );
  // The probe ran and read what it could: the worker's own process is among those it saw.
  expect(found).toContain("probe-done");
  expect(found).toContain("oma-ama-worker");
  expect(found).toContain("ANTHROPIC_SESSION_ID=");
  expect(secrets.size).toBeGreaterThanOrEqual(3);
  for (const secret of secrets)
    expect(found.includes(secret), "a credential reached a tool call").toBe(false);
});
