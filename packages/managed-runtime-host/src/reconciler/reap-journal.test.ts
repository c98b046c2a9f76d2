import { describe, expect, it } from "vitest";
import type { ManagedSandboxPort } from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeOrphanReconciler } from "../orphan-reconciler.js";
import { createMemoryOrphanPort } from "../stores/memory-orphan-port.js";
import { reconcilerStores as stores } from "./reconciler-test-stores.js";
import { createMemorySandboxJournal } from "../stores/memory-sandbox-journal.js";
import { createManualTime } from "../time.js";

const TTL = 30_000;
const scope = {
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "session-1",
  workId: "work-1",
};

/** Stands in for a provider: runtimes it runs, a reap that may be ignored (a delete that does not reach), and inspect. */
function createProvider() {
  const running = new Set<string>();
  let deletesReach = true;
  const sandbox: Pick<ManagedSandboxPort, "reap" | "inspect"> = {
    async reap({ lease }) {
      if (deletesReach) running.delete(lease.runtimeId);
    },
    async inspect(lease) {
      return { state: running.has(lease.runtimeId) ? "running" : "stopped" };
    },
  };
  return { sandbox, running, setDeletesReach: (value: boolean) => void (deletesReach = value) };
}

describe.each(stores)("journal reconciliation over %s", (_, createStores) => {
  const setup = async () => {
    const clock = createManualTime();
    const { fences, journal, orphans } = await createStores(clock);
    const provider = createProvider();
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans,
      journal,
      fences,
      sandbox: provider.sandbox,
      clock,
      backoff: { baseMs: 1_000, maxMs: 4_000, jitter: 0 },
    });
    // What a host leaves when it dies after journaling and starting a runtime: a fence nobody renews.
    const journalRuntime = async (runtimeId: string, ownerId = "owner-a") => {
      const acquired = await fences.acquire({ scope, ownerId, ttlMs: TTL });
      if (acquired.type !== "acquired") throw new Error("fence not acquired");
      await journal.record({
        scope,
        generation: acquired.fence.generation,
        ownerId,
        sandbox: { provider: "test", runtimeId },
      });
      provider.running.add(runtimeId);
      return acquired.fence;
    };
    return { clock, fences, journal, provider, reconciler, journalRuntime };
  };

  it("never reaps a sandbox whose generation a live run holds, and reaps it once the fence expired", async () => {
    const { clock, journal, provider, reconciler, journalRuntime } = await setup();
    await journalRuntime("rt-1");
    expect((await reconciler.runOnce({ limit: 10 })).journal).toEqual({
      reaped: 0,
      failed: 0,
      givenUp: 0,
      held: 1,
      deferred: 0,
      exhausted: 0,
      salvaged: 0,
      superseded: 0,
      salvageFailed: 0,
    });
    expect(provider.running.has("rt-1")).toBe(true);
    await clock.advance(TTL);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ reaped: 1, held: 0 });
    expect(provider.running.size).toBe(0);
    expect(await journal.list({ limit: 10 })).toEqual([]);
  });

  it("holds a sandbox journaled under a generation its owner rotated past, reaps it once released", async () => {
    const { fences, provider, reconciler, journalRuntime } = await setup();
    await journalRuntime("rt-1");
    // A live checkpoint's rotation: the same owner and work item take the next generation, the run goes on.
    const rotated = await fences.acquire({ scope, ownerId: "owner-a", ttlMs: TTL });
    if (rotated.type !== "acquired") throw new Error("fence not rotated");
    expect(rotated.fence.generation).toBe(2);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ reaped: 0, held: 1 });
    expect(provider.running.has("rt-1")).toBe(true);
    await fences.release({ fence: rotated.fence, reason: "failed" });
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ reaped: 1, held: 0 });
    expect(provider.running.size).toBe(0);
  });

  it("reaps the sandbox of a generation another owner took over while the newer one stays held", async () => {
    const { clock, provider, reconciler, journalRuntime } = await setup();
    await journalRuntime("rt-old");
    await clock.advance(TTL);
    await journalRuntime("rt-new", "owner-b");
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ reaped: 1, held: 1 });
    expect([...provider.running]).toEqual(["rt-new"]);
  });

  it("keeps a record whose delete the provider contradicts, with backoff, until the runtime is gone", async () => {
    const { clock, fences, journal, provider, reconciler, journalRuntime } = await setup();
    const fence = await journalRuntime("rt-1");
    await fences.release({ fence, reason: "failed" });
    provider.setDeletesReach(false);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      reaped: 0,
      failed: 1,
    });
    const [record] = await journal.list({ limit: 1 });
    expect(record).toMatchObject({
      attempts: 1,
      lastError:
        "sandbox_failed: reap unconfirmed: the provider still reports runtime rt-1 running after the delete",
    });
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ deferred: 1 });
    provider.setDeletesReach(true);
    await clock.advance(1_000);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ reaped: 1 });
    expect(provider.running.size).toBe(0);
  });

  it("confirms orphan reaps the same way", async () => {
    const { clock, provider } = await setup();
    provider.running.add("rt-orphan");
    provider.setDeletesReach(false);
    const { orphans: store } = await createStores(clock);
    const own = createManagedRuntimeOrphanReconciler({
      orphans: store,
      sandbox: provider.sandbox,
      clock,
      backoff: { baseMs: 1_000, maxMs: 1_000, jitter: 0 },
    });
    await store.enqueue({
      scope,
      generation: 1,
      ownerId: "owner-a",
      sandbox: { provider: "test", runtimeId: "rt-orphan" },
      reason: "failed",
      error: "terminate failed",
    });
    await clock.advance(1_000);
    expect(await own.runOnce({ limit: 10 })).toMatchObject({ reaped: 0, failed: 1 });
    provider.setDeletesReach(true);
    await clock.advance(2_000);
    expect(await own.runOnce({ limit: 10 })).toMatchObject({ reaped: 1 });
    expect(provider.running.size).toBe(0);
  });

  it("refuses a journal without fences as invalid_config", () => {
    expect(() =>
      createManagedRuntimeOrphanReconciler({
        orphans: createMemoryOrphanPort(),
        journal: createMemorySandboxJournal(),
        sandbox: createProvider().sandbox,
      }),
    ).toThrow(
      expect.objectContaining({
        code: "invalid_config",
        message: expect.stringContaining("fences"),
      }),
    );
  });
});
