import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  type ManagedSandboxPort,
  ManagedRuntimeError,
  type RuntimeOrphanPort,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ManagedRuntimeOrphanReconcilerOptions,
  createManagedRuntimeOrphanReconciler,
} from "./orphan-reconciler.js";
import { applyMigrations } from "./sql/apply-migrations.js";
import { createBetterSqliteClient } from "./sql/better-sqlite-client.js";
import { createSqlOrphanPort } from "./sql/sql-orphan-port.js";
import { createMemoryOrphanPort } from "./stores/memory-orphan-port.js";
import { type ManualTime, createManualTime } from "./time.js";

type ReapInput = Parameters<ManagedSandboxPort["reap"]>[0];

/**
 * Stands in for a provider's reap (containers cannot run here): it keeps a set of running runtimes,
 * treats a gone runtime as success, and throws the scripted failures first.
 */
function createProvider(runtimeIds: readonly string[]) {
  const running = new Set(runtimeIds);
  const failures: unknown[] = [];
  const calls: ReapInput[] = [];
  const sandbox: Pick<ManagedSandboxPort, "reap"> = {
    async reap(input) {
      calls.push(input);
      if (failures.length > 0) throw failures.shift();
      running.delete(input.lease.runtimeId);
    },
  };
  return { sandbox, running, failures, calls };
}

const orphanInput = (workId: string) => ({
  scope: { workspaceId: "ws-1", environmentId: "env-1", sessionId: "session-1", workId },
  generation: 2,
  ownerId: "owner-a",
  sandbox: { provider: "test", runtimeId: `rt-${workId}` },
  reason: "failed" as const,
  error: "terminate failed",
});

const stores: [string, (clock: ManualTime) => Promise<RuntimeOrphanPort>][] = [
  ["memory", async (clock) => createMemoryOrphanPort({ clock })],
  [
    "SQL over better-sqlite3",
    async (clock) => {
      const client = createBetterSqliteClient(new Database(":memory:"));
      await applyMigrations(client);
      return createSqlOrphanPort({ client, clock });
    },
  ],
];

describe.each(stores)("orphan reconciler over %s", (_, createStore) => {
  const setup = async (
    runtimeIds: string[],
    options: Partial<ManagedRuntimeOrphanReconcilerOptions> = {},
  ) => {
    const clock = createManualTime();
    const orphans = await createStore(clock);
    const provider = createProvider(runtimeIds);
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans,
      sandbox: provider.sandbox,
      clock,
      scheduler: clock,
      backoff: { baseMs: 1000, maxMs: 4000, jitter: 0 },
      ...options,
    });
    return { clock, orphans, provider, reconciler };
  };

  it("reaps due orphans from their lease and resolves them", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a", "rt-b"]);
    await orphans.enqueue(orphanInput("a"));
    await orphans.enqueue(orphanInput("b"));
    await clock.advance(1000);
    expect(await reconciler.runOnce({ limit: 10 })).toEqual({
      reaped: 2,
      failed: 0,
      givenUp: 0,
      deferred: 0,
      exhausted: 0,
    });
    expect(provider.calls).toEqual([
      {
        scope: orphanInput("a").scope,
        lease: { provider: "test", runtimeId: "rt-a" },
        reason: "failed",
      },
      {
        scope: orphanInput("b").scope,
        lease: { provider: "test", runtimeId: "rt-b" },
        reason: "failed",
      },
    ]);
    expect(provider.running.size).toBe(0);
    expect(await orphans.list({ limit: 10 })).toEqual([]);
  });

  it("reaps a runtime twice safely when resolving failed after the first reap", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a"]);
    await orphans.enqueue(orphanInput("a"));
    const resolve = orphans.resolve.bind(orphans);
    let resolveFailures = 1;
    orphans.resolve = async (input) => {
      if (resolveFailures-- > 0) throw new Error("database unavailable");
      return resolve(input);
    };
    await clock.advance(1000);
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ reaped: 0, failed: 1 });
    expect(provider.running.size).toBe(0);
    await clock.advance(2000);
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ reaped: 1, failed: 0 });
    expect(provider.calls.map((call) => call.lease.runtimeId)).toEqual(["rt-a", "rt-a"]);
    expect(await orphans.list({ limit: 10 })).toEqual([]);
  });

  it("records attempts and only the redacted message of a failure", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a", "rt-b"], {
      secrets: ["sk-live-123"],
    });
    const a = await orphans.enqueue(orphanInput("a"));
    await orphans.enqueue(orphanInput("b"));
    provider.failures.push(
      new SandboxFailedError({ message: "destroy refused for key sk-live-123" }),
      { detail: "an object" },
    );
    await clock.advance(1000);
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ reaped: 0, failed: 2 });
    const [first, second] = await orphans.list({ limit: 10 });
    expect(first).toMatchObject({
      id: a.id,
      attempts: 2,
      lastError: "sandbox_failed: destroy refused for key [redacted]",
    });
    expect(second).toMatchObject({ attempts: 2, lastError: "non-error value thrown (object)" });
  });

  it("waits the backoff delay, doubling up to maxMs", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a"], { maxAttempts: 10 });
    await orphans.enqueue(orphanInput("a"));
    const expectedDelays = [1000, 2000, 4000, 4000];
    for (const delay of expectedDelays) {
      provider.failures.push(new Error("still busy"));
      await clock.advance(delay - 1);
      expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ failed: 0, deferred: 1 });
      await clock.advance(1);
      expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ failed: 1, deferred: 0 });
    }
    expect(provider.calls).toHaveLength(expectedDelays.length);
    const [record] = await orphans.list({ limit: 1 });
    expect(record).toMatchObject({ attempts: 5, lastError: "Error: still busy" });
  });

  it("shortens the delay by the jitter fraction", async () => {
    const { clock, orphans, reconciler } = await setup(["rt-a"], {
      backoff: { baseMs: 1000, maxMs: 1000, jitter: 0.5 },
      random: () => 0.99,
    });
    await orphans.enqueue(orphanInput("a"));
    await clock.advance(490);
    expect(await reconciler.runOnce({ limit: 1 })).toMatchObject({ reaped: 0, deferred: 1 });
    await clock.advance(20);
    expect(await reconciler.runOnce({ limit: 1 })).toMatchObject({ reaped: 1 });
  });

  it("gives up at maxAttempts, leaves the record listed and skips it afterwards", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a"], { maxAttempts: 3 });
    await orphans.enqueue(orphanInput("a"));
    provider.failures.push(new Error("gone wrong"), new Error("gone wrong again"));
    await clock.advance(1000);
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ failed: 1, givenUp: 0 });
    await clock.advance(2000);
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ failed: 0, givenUp: 1 });
    await clock.advance(60_000);
    expect(await reconciler.runOnce({ limit: 10 })).toEqual({
      reaped: 0,
      failed: 0,
      givenUp: 0,
      deferred: 0,
      exhausted: 1,
    });
    expect(provider.calls).toHaveLength(2);
    expect(await orphans.list({ limit: 10 })).toMatchObject([
      { attempts: 3, lastError: "gave up after 3 attempts: Error: gone wrong again" },
    ]);
  });

  it("does not let given-up or waiting records starve due ones", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-new"], { maxAttempts: 2 });
    for (const workId of ["old-1", "old-2", "old-3", "old-4", "old-5"]) {
      const record = await orphans.enqueue(orphanInput(workId));
      await orphans.failed({ id: record.id, error: "given up earlier" });
    }
    await orphans.enqueue(orphanInput("waiting"));
    await orphans.failed({
      id: (await orphans.enqueue(orphanInput("waiting"))).id,
      error: "recent",
    });
    await clock.advance(1000);
    await orphans.enqueue(orphanInput("new"));
    await clock.advance(1000);
    expect(await reconciler.runOnce({ limit: 1 })).toEqual({
      reaped: 1,
      failed: 0,
      givenUp: 0,
      deferred: 0,
      exhausted: 6,
    });
    expect(provider.calls.map((call) => call.lease.runtimeId)).toEqual(["rt-new"]);
  });

  it("stops between records when the signal aborts", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a", "rt-b"]);
    await orphans.enqueue(orphanInput("a"));
    await orphans.enqueue(orphanInput("b"));
    await clock.advance(1000);
    const controller = new AbortController();
    controller.abort();
    expect(await reconciler.runOnce({ limit: 10, signal: controller.signal })).toMatchObject({
      reaped: 0,
    });
    const midway = new AbortController();
    const reap = provider.sandbox.reap;
    provider.sandbox.reap = async (input) => {
      await reap(input);
      midway.abort();
    };
    expect(await reconciler.runOnce({ limit: 10, signal: midway.signal })).toMatchObject({
      reaped: 1,
    });
    expect(await orphans.list({ limit: 10 })).toHaveLength(1);
  });

  it("runs passes on the scheduler until aborted", async () => {
    const { clock, orphans, provider, reconciler } = await setup(["rt-a"]);
    await orphans.enqueue(orphanInput("a"));
    provider.failures.push(new Error("first pass fails"));
    const controller = new AbortController();
    const errors: unknown[] = [];
    const running = reconciler.run({
      limit: 10,
      intervalMs: 1000,
      signal: controller.signal,
      onError: (error) => errors.push(error),
    });
    // Each pass finishes on its own schedule; step time until the second reap resolved the record.
    for (let step = 0; step < 40 && provider.running.size > 0; step += 1) {
      await clock.advance(250);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    controller.abort();
    await running;
    expect(provider.calls).toHaveLength(2);
    expect(await orphans.list({ limit: 10 })).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe("orphan reconciler options", () => {
  const valid = { orphans: createMemoryOrphanPort(), sandbox: { reap: async () => {} } };
  it.each([
    ["maxAttempts", { maxAttempts: 0 }],
    ["backoff.maxMs", { backoff: { baseMs: 5000, maxMs: 1000 } }],
    ["backoff.jitter", { backoff: { jitter: 2 } }],
    ["sandbox", { sandbox: {} }],
    ["orphans", { orphans: { list: () => [] } }],
  ])("refuses a bad %s as invalid_config naming it", (field, override) => {
    let caught: unknown;
    try {
      createManagedRuntimeOrphanReconciler({
        ...valid,
        ...override,
      } as ManagedRuntimeOrphanReconcilerOptions);
    } catch (error) {
      caught = error;
    }
    expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
    expect((caught as Error).message).toContain(field);
  });

  it("refuses a bad pass limit as invalid_request", async () => {
    const reconciler = createManagedRuntimeOrphanReconciler(valid);
    await expect(reconciler.runOnce({ limit: 0 })).rejects.toSatisfy((error: unknown) =>
      ManagedRuntimeError.hasCode(error, "invalid_request"),
    );
  });
});
