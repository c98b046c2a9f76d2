import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { getSandbox } from "@cloudflare/sandbox";
import { createD1SqlClient, createSqlOrphanPort } from "@open-managed-agents/managed-runtime-host";
import type { RuntimeResourceScope } from "@open-managed-agents/runtime-resource-contract";
import { expect, it } from "vitest";
import worker from "../../src/index.js";
import { testEnv } from "../support/api.js";

const HOUR_MS = 3_600_000;

function scope(): RuntimeResourceScope {
  return { workspaceId: "default", environmentId: "production", sessionId: `s-${crypto.randomUUID()}`, workId: "w" };
}

it("reaps a due orphan's container on the cron trigger, records a failed reap, and leaves a fresh orphan for later", async () => {
  // A container still running after its work item: its terminate failed an hour ago.
  const runtimeId = `oma-${crypto.randomUUID()}`;
  await getSandbox(testEnv.Sandbox, runtimeId).exec("true");
  expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({ status: expect.stringMatching(/^(running|healthy)$/) });

  const client = createD1SqlClient(testEnv.DB);
  const anHourAgo = createSqlOrphanPort({ client, clock: { now: () => Date.now() - HOUR_MS } });
  const due = await anHourAgo.enqueue({ scope: scope(), generation: 1, ownerId: "gone-host", sandbox: { provider: "cloudflare", runtimeId }, reason: "failed", error: "terminate timed out" });
  const foreign = await anHourAgo.enqueue({ scope: scope(), generation: 1, ownerId: "gone-host", sandbox: { provider: "elsewhere", runtimeId: "x-1" }, reason: "failed", error: "terminate timed out" });
  // Enqueued just now: its backoff (10 s after the failed terminate) has not passed.
  const fresh = await createSqlOrphanPort({ client }).enqueue({ scope: scope(), generation: 1, ownerId: "gone-host", sandbox: { provider: "cloudflare", runtimeId: `oma-${crypto.randomUUID()}` }, reason: "failed", error: "terminate timed out" });

  const ctx = createExecutionContext();
  // Reaping only: without the environment key the cron trigger claims nothing (environment.test.ts claims).
  await worker.scheduled(createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }), { ...testEnv, ENVIRONMENT_KEY: "" }, ctx);
  await waitOnExecutionContext(ctx);

  const remaining = new Map((await anHourAgo.list({ limit: 1000 })).map((record) => [record.id, record]));
  expect(remaining.has(due.id)).toBe(false);
  expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({ status: expect.stringMatching(/^stopped/) });
  expect(remaining.get(foreign.id)).toMatchObject({ attempts: 2, lastError: expect.stringContaining("provider_mismatch") });
  expect(remaining.get(fresh.id)).toMatchObject({ attempts: 1 });
});
