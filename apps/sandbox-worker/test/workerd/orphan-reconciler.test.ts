import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { getSandbox } from "@cloudflare/sandbox";
import { createCloudflareManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare";
import {
  createD1SqlClient,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import worker from "../../src/index.js";
import { cloudflareDriverOptions } from "../../src/runtime/driver-options.js";
import { testEnv } from "../support/api.js";

const HOUR_MS = 3_600_000;

function scope(): RuntimeResourceScope {
  return {
    workspaceId: "default",
    environmentId: "production",
    sessionId: `s-${crypto.randomUUID()}`,
    workId: "w",
  };
}

it("reaps a due orphan's container on the cron trigger, records a failed reap, and leaves a fresh orphan for later", async () => {
  // A container still running after its work item: its terminate failed an hour ago.
  const runtimeId = `oma-${crypto.randomUUID()}`;
  await getSandbox(testEnv.Sandbox, runtimeId).exec("true");
  expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({
    status: expect.stringMatching(/^(running|healthy)$/),
  });

  const client = createD1SqlClient(testEnv.DB);
  const anHourAgo = createSqlOrphanPort({ client, clock: { now: () => Date.now() - HOUR_MS } });
  const due = await anHourAgo.enqueue({
    scope: scope(),
    generation: 1,
    ownerId: "gone-host",
    sandbox: { provider: "cloudflare", runtimeId },
    reason: "failed",
    error: "terminate timed out",
  });
  const foreign = await anHourAgo.enqueue({
    scope: scope(),
    generation: 1,
    ownerId: "gone-host",
    sandbox: { provider: "elsewhere", runtimeId: "x-1" },
    reason: "failed",
    error: "terminate timed out",
  });
  // Enqueued just now: its backoff (10 s after the failed terminate) has not passed.
  const fresh = await createSqlOrphanPort({ client }).enqueue({
    scope: scope(),
    generation: 1,
    ownerId: "gone-host",
    sandbox: { provider: "cloudflare", runtimeId: `oma-${crypto.randomUUID()}` },
    reason: "failed",
    error: "terminate timed out",
  });

  const ctx = createExecutionContext();
  // Reaping only: without the environment key the cron trigger claims nothing (environment.test.ts claims).
  await worker.scheduled(
    createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }),
    { ...testEnv, ENVIRONMENT_KEY: "" },
    ctx,
  );
  await waitOnExecutionContext(ctx);

  const remaining = new Map(
    (await anHourAgo.list({ limit: 1000 })).map((record) => [record.id, record]),
  );
  expect(remaining.has(due.id)).toBe(false);
  expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({
    status: expect.stringMatching(/^stopped/),
  });
  expect(remaining.get(foreign.id)).toMatchObject({
    attempts: 2,
    lastError: expect.stringContaining("provider_mismatch"),
  });
  expect(remaining.get(fresh.id)).toMatchObject({ attempts: 1 });
});

it("salvages a container whose Worker died mid-turn: publishes its workspace, which the next turn restores, then reaps it", async () => {
  // What an ama_worker turn leaves when its Worker dies: a container whose AMA worker wrote a file and went on.
  const runtimeId = `oma-${crypto.randomUUID()}`;
  await getSandbox(testEnv.Sandbox, runtimeId).exec(
    "mkdir -p /workspace && echo written by the killed turn > /workspace/killed.txt",
  );
  const client = createD1SqlClient(testEnv.DB);
  const killed = scope();
  // The dead Worker's fence, taken an hour ago and never renewed; its run was marked salvageable (revision 0).
  const held = await createSqlFencePort({
    client,
    clock: { now: () => Date.now() - HOUR_MS },
  }).acquire({ scope: killed, ownerId: "dead-worker", ttlMs: 60_000 });
  if (held.type !== "acquired") throw new Error("expected the fence");
  const journal = createSqlSandboxJournal({ client });
  const record = await journal.record({
    scope: killed,
    generation: held.fence.generation,
    ownerId: "dead-worker",
    sandbox: { provider: "cloudflare", runtimeId },
  });
  await journal.setStartRevision({ id: record.id, startRevision: 0 });

  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }),
    { ...testEnv, ENVIRONMENT_KEY: "" },
    ctx,
  );
  await waitOnExecutionContext(ctx);

  expect((await journal.list({ limit: 1000 })).some((entry) => entry.id === record.id)).toBe(false);
  expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({
    status: expect.stringMatching(/^stopped/),
  });
  const next = await createSqlFencePort({ client }).acquire({
    scope: { ...killed, workId: "next-turn" },
    ownerId: "next-worker",
    ttlMs: 60_000,
  });
  expect(next).toMatchObject({
    type: "acquired",
    publication: { revision: 1, generation: held.fence.generation + 1 },
  });
  if (next.type !== "acquired" || !next.publication)
    throw new Error("expected the salvaged publication");

  // The next turn restores the salvaged revision through the driver and finds the killed turn's file.
  const driver = createCloudflareManagedRuntime(
    testEnv,
    cloudflareDriverOptions(testEnv, readConfig(testEnv)),
  );
  const profile: ManagedRuntimeProfile = {
    workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: { type: "ama_worker", process: { command: "sh" } },
  };
  const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
  const ports = await driver.create({
    environmentId: killed.environmentId,
    placement: "in_process",
    profile,
    plan,
    providerConfig: {},
  });
  const signal = new AbortController().signal;
  const binding = await ports.workspace.materialize({
    scope: next.fence,
    fence: next.fence,
    strategy: "checkpoint_restore",
    activeCheckpoint: next.publication.workspaceCandidate,
    idempotencyKey: "next-materialize",
    signal,
  });
  const lease = await ports.sandbox.acquire({
    scope: next.fence,
    fence: next.fence,
    plan,
    workspace: binding,
    outputs: null,
    credentialEgress: null,
    signal,
  });
  try {
    const read = await getSandbox(testEnv.Sandbox, lease.runtimeId).exec(
      "cat /workspace/killed.txt",
    );
    expect(read.stdout).toContain("written by the killed turn");
  } finally {
    await ports.sandbox.terminate({
      scope: next.fence,
      fence: next.fence,
      lease,
      reason: "completed",
    });
  }
});
