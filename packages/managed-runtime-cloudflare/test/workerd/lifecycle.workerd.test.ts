import { getSandbox } from "@cloudflare/sandbox";
import {
  applyMigrations,
  createD1SqlClient,
  createManagedRuntimeHost,
  createSqlFencePort,
  createSqlOrphanPort,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import {
  ManagedRuntimeError,
  type ManagedRuntimeProfile,
  type RuntimeResourceFence,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { type CloudflareSandbox, createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import {
  TEST_RUNTIME_ENVIRONMENT,
  aliveRuntimes,
  createSandbox,
  expectNoContainerOutlivesItsRun,
  newScope,
  testEnv,
} from "./fixtures.js";

const signal = new AbortController().signal;
// Long enough for a heartbeat round trip through workerd and the container on a loaded two-core machine.
const HEARTBEAT_MS = 1_500;

// The harness stops a process with SIGTERM and, 5 s later, SIGKILL; this covers both and the log stream's end.
const LATE_CALL_WINDOW_MS = 15_000;

/** An ama_worker process that ignores SIGTERM: only the SIGKILL after the grace period (or the destroy) ends it. */
const STUBBORN_PROFILE: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: {
    type: "ama_worker",
    process: {
      command: "sh",
      args: ["-c", "trap '' TERM; touch /workspace/.started; while :; do sleep 0.2; done"],
    },
  },
};

function waitingProfile(): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: { command: "sh", args: ["-c", "while [ ! -f /workspace/.go ]; do sleep 0.1; done"] },
    },
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

expectNoContainerOutlivesItsRun();

describe("lifecycle through the real host, D1 fences and the Sandbox Durable Object", () => {
  it("renews the container's activity timer once per host heartbeat, and once before the lease is published", async () => {
    const client = createD1SqlClient(testEnv.VAULT_DB);
    await applyMigrations(client);
    const observed = observedSandboxes();
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox: observed.create,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    });
    const profile = waitingProfile();
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan: resolveManagedRuntimePlan(profile, driver.descriptor().capabilities),
      providerConfig: {},
    });
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
    await expect
      .poll(() => renewalsAfterBeat.length, { timeout: 45_000, interval: 50 })
      .toBeGreaterThanOrEqual(3);
    const runtimeId = observed.runtimeIds[0] ?? "";
    // Acquire renewed once before publishing the lease; each heartbeat renewed exactly once more.
    expect(renewalsAfterBeat.slice(0, 3)).toEqual([2, 3, 4]);
    await createSandbox(testEnv, runtimeId).exec("touch /workspace/.go", { timeoutMs: 10_000 });
    const result = await run;
    expect(result.type).toBe("completed");
    // The Container class records the stop once the killed container's monitor settles, so the state lags the destroy.
    await expect
      .poll(async () => (await getSandbox(testEnv.SANDBOX, runtimeId).getState()).status, {
        timeout: 30_000,
        interval: 250,
      })
      .toMatch(/^stopped/);
  });

  it("reports heartbeat lost once the container is gone, and terminate and reap stay idempotent", async () => {
    const observed = observedSandboxes();
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox: observed.create,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    });
    const profile = waitingProfile();
    const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const scope = newScope();
    const fence: RuntimeResourceFence = {
      ...scope,
      ownerId: "o",
      generation: 1,
      token: "t",
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
    const workspace = await resources.workspace.materialize({
      scope,
      fence,
      strategy: plan.workspaceStrategy,
      activeCheckpoint: null,
      idempotencyKey: "w",
      signal,
    });
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace,
      outputs: null,
      credentialEgress: null,
      signal,
    });
    expect(await resources.sandbox.heartbeat({ scope, fence, lease })).toEqual({ type: "alive" });

    // The platform deletes the container behind the driver's back.
    await getSandbox(testEnv.SANDBOX, lease.runtimeId).destroy();
    const heartbeat = await resources.sandbox.heartbeat({ scope, fence, lease });
    expect(heartbeat.type).toBe("lost");

    for (const reason of ["completed", "failed", "lease_lost"] as const)
      await resources.sandbox.terminate({ scope, fence, lease, reason });
    // A fresh driver instance reaps from the serialized lease alone, twice.
    const other = await createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    }).create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const serialized = JSON.parse(JSON.stringify(lease));
    await other.sandbox.reap({ scope, lease: serialized, reason: "failed" });
    await other.sandbox.reap({ scope, lease: serialized, reason: "failed" });
    await expect
      .poll(async () => (await getSandbox(testEnv.SANDBOX, lease.runtimeId).getState()).status, {
        timeout: 30_000,
        interval: 250,
      })
      .toMatch(/^stopped/);
    expect(Object.keys(lease).sort()).toEqual(["provider", "runtimeId"]);
  });
});

/**
 * The application's sandbox, with process log streams as Cloudflare ends them when a container is
 * destroyed under them: broken, without an exit frame (the local container server sends the exit of every
 * process it kills first). The harness then reads the process's status from the sandbox. Remembers runtime ids.
 */
function streamsBrokenByDestroy() {
  const runtimeIds: string[] = [];
  const create = (env: typeof testEnv, runtimeId: string): CloudflareSandbox => {
    runtimeIds.push(runtimeId);
    const inner = createSandbox(env, runtimeId);
    let breakStreams = (): void => undefined;
    const broken = new Promise<never>((_resolve, reject) => {
      breakStreams = () => reject(new SandboxFailedError({ message: "Network connection lost." }));
    });
    broken.catch(() => undefined);
    return {
      ...inner,
      async *processLogs(processId, logSignal) {
        const events = inner.processLogs(processId, logSignal)[Symbol.asyncIterator]();
        try {
          for (;;) {
            const next = await Promise.race([events.next(), broken]);
            if (next.done) return;
            yield next.value;
          }
        } finally {
          void events.return?.(undefined);
        }
      },
      async destroy() {
        breakStreams();
        await inner.destroy();
      },
    };
  };
  return { runtimeIds, create };
}

describe("a destroyed runtime is never started again", () => {
  it("ends lease_lost when another owner takes the fence mid-run, and no late call restarts the container", async () => {
    const client = createD1SqlClient(testEnv.VAULT_DB);
    await applyMigrations(client);
    const observed = streamsBrokenByDestroy();
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox: observed.create,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    });
    const plan = resolveManagedRuntimePlan(STUBBORN_PROFILE, driver.descriptor().capabilities);
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile: STUBBORN_PROFILE,
      plan,
      providerConfig: {},
    });
    const host = createManagedRuntimeHost({
      ownerId: "lease-lost-test",
      leaseTtlMs: 30_000,
      heartbeatIntervalMs: 1_000,
      fences: createSqlFencePort({ client }),
      orphans: createSqlOrphanPort({ client }),
      ...resources,
    });
    const scope = newScope();
    const run = host.run({ scope, profile: STUBBORN_PROFILE });
    // The process runs: the fence is held and the sandbox is up.
    await expect
      .poll(
        async () =>
          observed.runtimeIds.length > 0 &&
          (
            await createSandbox(testEnv, observed.runtimeIds[0] ?? "").exec(
              "test -f /workspace/.started",
              { timeoutMs: 10_000 },
            )
          ).exitCode === 0,
        { timeout: 45_000, interval: 250 },
      )
      .toBe(true);
    const runtimeId = observed.runtimeIds[0] ?? "";
    const taken = await testEnv.VAULT_DB.prepare(
      "UPDATE runtime_resource_fences SET owner_id = 'another-host', token_sha256 = 'taken', generation = generation + 1, expires_at = ? WHERE session_id = ?",
    )
      .bind(Date.now() + 600_000, scope.sessionId)
      .run();
    expect(taken.meta.changes).toBe(1);

    const result = await run;
    expect(result).toMatchObject({ type: "lease_lost", error: { code: "lease_lost" } });
    // The state lags the destroy (see above): wait for the Container class to record the stop.
    await expect
      .poll(async () => (await getSandbox(testEnv.SANDBOX, runtimeId).getState()).status, {
        timeout: 30_000,
        interval: 250,
      })
      .toMatch(/^stopped/);
    // The harness still stops its process (SIGTERM, then SIGKILL) and reads its status once the log stream
    // broke under the destroy: none of it may reach the destroyed Sandbox object, which would start a fresh container.
    const until = Date.now() + LATE_CALL_WINDOW_MS;
    while (Date.now() < until) {
      expect(await aliveRuntimes([runtimeId])).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 120_000);

  it("refuses a workspace checkpoint and a heartbeat's renewal after terminate with lease_lost, starting no container", async () => {
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    });
    const profile: ManagedRuntimeProfile = {
      ...STUBBORN_PROFILE,
      driver: { type: "ama_worker", process: { command: "sh", args: ["-c", "true"] } },
    };
    const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const scope = newScope();
    const fence: RuntimeResourceFence = {
      ...scope,
      ownerId: "o",
      generation: 1,
      token: "t",
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
    const binding = await resources.workspace.materialize({
      scope,
      fence,
      strategy: plan.workspaceStrategy,
      activeCheckpoint: null,
      idempotencyKey: "w",
      signal,
    });
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: binding,
      outputs: null,
      credentialEgress: null,
      signal,
    });
    await resources.sandbox.terminate({ scope, fence, lease, reason: "lease_lost" });
    expect(await aliveRuntimes([lease.runtimeId])).toEqual([]);

    const late = await resources.workspace
      .checkpoint({ scope, fence, binding, sandbox: lease, idempotencyKey: "late", signal })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(ManagedRuntimeError.hasCode(late, "lease_lost")).toBe(true);
    expect(await resources.sandbox.heartbeat({ scope, fence, lease })).toMatchObject({
      type: "lost",
    });
    expect(await aliveRuntimes([lease.runtimeId])).toEqual([]);
    // Terminate and reap stay idempotent.
    await resources.sandbox.terminate({ scope, fence, lease, reason: "lease_lost" });
    await resources.sandbox.reap({ scope, lease, reason: "lease_lost" });
    expect(await aliveRuntimes([lease.runtimeId])).toEqual([]);
  });
});
