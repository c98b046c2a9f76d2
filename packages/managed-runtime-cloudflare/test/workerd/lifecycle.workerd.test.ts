import { getSandbox } from "@cloudflare/sandbox";
import {
  applyMigrations,
  createD1SqlClient,
  createManagedRuntimeHost,
  createSqlFencePort,
  createSqlOrphanPort,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import type { ManagedRuntimeProfile, RuntimeResourceFence, RuntimeResourceScope } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { type CloudflareSandbox, createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import { TEST_RUNTIME_ENVIRONMENT, createSandbox, testEnv } from "./fixtures.js";

const signal = new AbortController().signal;
// Long enough for a heartbeat round trip through workerd and the container on a loaded two-core machine.
const HEARTBEAT_MS = 1_500;

function newScope(): RuntimeResourceScope {
  return { workspaceId: "ws", environmentId: "env", sessionId: `s-${crypto.randomUUID()}`, workId: `w-${crypto.randomUUID()}` };
}

function waitingProfile(): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: { type: "ama_worker", process: { command: "sh", args: ["-c", "while [ ! -f /workspace/.go ]; do sleep 0.1; done"] } },
  };
}

/** The application's sandbox, observed: counts activity renewals and remembers runtime ids. */
function observedSandboxes() {
  const runtimeIds: string[] = [];
  const renewals = new Map<string, number>();
  const create = (env: typeof testEnv, runtimeId: string): CloudflareSandbox => {
    runtimeIds.push(runtimeId);
    const inner = createSandbox(env, runtimeId);
    return {
      ...inner,
      renewActivityTimeout: async () => {
        renewals.set(runtimeId, (renewals.get(runtimeId) ?? 0) + 1);
        await inner.renewActivityTimeout();
      },
    };
  };
  return { runtimeIds, renewals, create };
}

describe("lifecycle through the real host, D1 fences and the Sandbox Durable Object", () => {
  it("renews the container's activity timer once per host heartbeat, and once before the lease is published", async () => {
    const client = createD1SqlClient(testEnv.VAULT_DB);
    await applyMigrations(client);
    const observed = observedSandboxes();
    const driver = createCloudflareManagedRuntimeDriver(testEnv, { createSandbox: observed.create, runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT });
    const profile = waitingProfile();
    const resources = await driver.create({ environmentId: "env", placement: "in_process", profile, plan: resolveManagedRuntimePlan(profile, driver.descriptor().capabilities), providerConfig: {} });
    // Renewals counted right after each heartbeat; heartbeats run one at a time, so this is race-free.
    const renewalsAfterBeat: number[] = [];
    const host = createManagedRuntimeHost({
      ownerId: "cadence-test",
      leaseTtlMs: 30_000,
      heartbeatIntervalMs: HEARTBEAT_MS,
      fences: createSqlFencePort({ client }),
      orphans: createSqlOrphanPort({ client }),
      ...resources,
      sandbox: {
        ...resources.sandbox,
        heartbeat: async (input) => {
          const beat = await resources.sandbox.heartbeat(input);
          renewalsAfterBeat.push(observed.renewals.get(input.lease.runtimeId) ?? 0);
          return beat;
        },
      },
    });
    const run = host.run({ scope: newScope(), profile });
    await expect.poll(() => renewalsAfterBeat.length, { timeout: 45_000, interval: 50 }).toBeGreaterThanOrEqual(3);
    const runtimeId = observed.runtimeIds[0] ?? "";
    // Acquire renewed once before publishing the lease; each heartbeat renewed exactly once more.
    expect(renewalsAfterBeat.slice(0, 3)).toEqual([2, 3, 4]);
    await createSandbox(testEnv, runtimeId).exec("touch /workspace/.go", { timeoutMs: 10_000 });
    const result = await run;
    expect(result.type).toBe("completed");
    expect(await getSandbox(testEnv.SANDBOX, runtimeId).getState()).toMatchObject({ status: expect.stringMatching(/^stopped/) });
  });

  it("reports heartbeat lost once the container is gone, and terminate and reap stay idempotent", async () => {
    const observed = observedSandboxes();
    const driver = createCloudflareManagedRuntimeDriver(testEnv, { createSandbox: observed.create, runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT });
    const profile = waitingProfile();
    const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
    const resources = await driver.create({ environmentId: "env", placement: "in_process", profile, plan, providerConfig: {} });
    const scope = newScope();
    const fence: RuntimeResourceFence = { ...scope, ownerId: "o", generation: 1, token: "t", expiresAt: new Date(Date.now() + 60_000).toISOString() };
    const workspace = await resources.workspace.materialize({ scope, fence, strategy: plan.workspaceStrategy, activeCheckpoint: null, idempotencyKey: "w", signal });
    const lease = await resources.sandbox.acquire({ scope, fence, plan, workspace, outputs: null, credentialEgress: null, signal });
    expect(await resources.sandbox.heartbeat({ scope, fence, lease })).toEqual({ type: "alive" });

    // The platform deletes the container behind the driver's back.
    await getSandbox(testEnv.SANDBOX, lease.runtimeId).destroy();
    const heartbeat = await resources.sandbox.heartbeat({ scope, fence, lease });
    expect(heartbeat.type).toBe("lost");

    for (const reason of ["completed", "failed", "lease_lost"] as const) await resources.sandbox.terminate({ scope, fence, lease, reason });
    // A fresh driver instance reaps from the serialized lease alone, twice.
    const other = await createCloudflareManagedRuntimeDriver(testEnv, { createSandbox, runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT }).create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const serialized = JSON.parse(JSON.stringify(lease));
    await other.sandbox.reap({ scope, lease: serialized, reason: "failed" });
    await other.sandbox.reap({ scope, lease: serialized, reason: "failed" });
    expect(await getSandbox(testEnv.SANDBOX, lease.runtimeId).getState()).toMatchObject({ status: expect.stringMatching(/^stopped/) });
    expect(Object.keys(lease).sort()).toEqual(["provider", "runtimeId"]);
  });
});
