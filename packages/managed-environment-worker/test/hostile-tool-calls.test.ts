import { readFile } from "node:fs/promises";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, expect, it } from "vitest";
import { decodeWorkSecret } from "../src/index.js";
import { type Stack, amaWorkerProfile, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it("gives an agent's tool call no credential of the worker: not in any process's environment or command line, not on disk", async () => {
  const secrets = new Set<string>([stack.environment.environmentKey]);
  const recordSecrets: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (String(input instanceof Request ? input.url : input).includes("/work/poll") && response.ok) {
      const text = await response.clone().text();
      const work = text.trim() === "" || text.trim() === "null" ? null : (JSON.parse(text) as { secret?: string | null });
      if (work?.secret) {
        secrets.add(work.secret);
        const { sessionsToken } = decodeWorkSecret(work.secret);
        if (sessionsToken) secrets.add(sessionsToken);
      }
    }
    return response;
  };
  const client = new Anthropic({ baseURL: stack.plane.url, apiKey: null, authToken: null, maxRetries: 0, fetch: recordSecrets });
  const worker = await stack.worker({ client, profileFor: () => amaWorkerProfile(stack.binDirectory) });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  const probe = await readFile(join(import.meta.dirname, "hostile", "credential-probes.sh"), "utf8");
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: probe } }] });
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  await stack.reportsAfter(1);
  controller.abort();
  await running;

  expect(stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type)).toEqual(["completed"]);
  const found = JSON.stringify(stack.plane.transcript(session.id).entries.map((entry) => entry.result?.content ?? []));
  // The probe ran and read what it could: the worker's own process is among those it saw.
  expect(found).toContain("probe-done");
  expect(found).toContain("oma-ama-worker");
  expect(found).toContain("ANTHROPIC_SESSION_ID=");
  expect(secrets.size).toBeGreaterThanOrEqual(3);
  for (const secret of secrets) expect(found.includes(secret), "a credential reached a tool call").toBe(false);
});
