import { describe, expect, it } from "vitest";
import { NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeOrphanReconciler } from "../orphan-reconciler.js";
import { createMemoryOrphanPort } from "../stores/memory-orphan-port.js";
import { reconcilerStores as stores } from "./reconciler-test-stores.js";
import { createManualTime } from "../time.js";
import type { ReconcilerSalvage, SalvageOutcome } from "./salvage-sandbox.js";

const TTL = 30_000;
const scope = {
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "session-1",
  workId: "work-2",
};
const base = { id: "wcp-base", contentHash: "sha256:base" };

/**
 * Stands in for a driver: runtimes with a tree of files and a harness that may still be writing. The
 * checkpoint's content hash names the tree it captured, so a test sees exactly what was published.
 */
function createDriver() {
  const runtimes = new Map<string, { files: string[]; harness: boolean }>();
  const calls: string[] = [];
  let checkpointFails = false;
  const salvage: ReconcilerSalvage = {
    async endAbandoned({ sandbox }) {
      calls.push(`end ${sandbox.runtimeId}`);
      const runtime = runtimes.get(sandbox.runtimeId);
      if (!runtime) throw new NotFoundError({ message: `runtime ${sandbox.runtimeId} is gone` });
      runtime.harness = false;
    },
    workspace: {
      materialize: async ({ fence }) => ({
        bindingId: `b-${fence.generation}`,
        mountPath: "/workspace",
        metadata: { "oma.workspace.strategy": "checkpoint_restore" },
      }),
      async checkpoint({ sandbox, fence }) {
        const runtime = runtimes.get(sandbox.runtimeId);
        calls.push(`checkpoint ${sandbox.runtimeId} harness=${runtime?.harness}`);
        if (!runtime || checkpointFails)
          throw new NotFoundError({ message: "refused: /workspace/fifo is a FIFO" });
        return {
          id: `wcp-${sandbox.runtimeId}`,
          contentHash: `sha256:${runtime.files.join(",")}`,
          revision: fence.generation,
        };
      },
      release: async () => undefined,
    },
  };
  const sandbox = {
    async reap({ lease }: { lease: { runtimeId: string } }) {
      calls.push(`reap ${lease.runtimeId}`);
      runtimes.delete(lease.runtimeId);
    },
    inspect: async (lease: { runtimeId: string }) => ({
      state: runtimes.has(lease.runtimeId) ? ("running" as const) : ("stopped" as const),
    }),
  };
  return {
    runtimes,
    calls,
    salvage,
    sandbox,
    failCheckpoints: () => void (checkpointFails = true),
  };
}

describe.each(stores)("salvage before the reap, over %s", (_, createStores) => {
  const setup = async () => {
    const clock = createManualTime();
    const { fences, journal, orphans } = await createStores(clock);
    const driver = createDriver();
    const outcomes: SalvageOutcome[] = [];
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans,
      journal,
      fences,
      sandbox: driver.sandbox,
      salvage: driver.salvage,
      onSalvage: (_record, outcome) => outcomes.push(outcome),
      clock,
    });
    // Turn 1 published revision 1; turn 2 (work-2) restored it, started its harness and its host died.
    const published = await fences.acquire({
      scope: { ...scope, workId: "work-1" },
      ownerId: "host-a",
      ttlMs: TTL,
    });
    if (published.type !== "acquired") throw new Error("expected acquired");
    await fences.publish({
      fence: published.fence,
      workspaceCandidate: base,
      outputCandidate: null,
    });
    await fences.release({ fence: published.fence, reason: "completed" });
    const abandon = async (runtimeId: string, startRevision: number | null = 1) => {
      const acquired = await fences.acquire({ scope, ownerId: "host-b", ttlMs: TTL });
      if (acquired.type !== "acquired") throw new Error("expected acquired");
      const record = await journal.record({
        scope,
        generation: acquired.fence.generation,
        ownerId: "host-b",
        sandbox: { provider: "test", runtimeId },
      });
      if (startRevision !== null) await journal.setStartRevision({ id: record.id, startRevision });
      driver.runtimes.set(runtimeId, { files: ["a.txt", `${runtimeId}.txt`], harness: true });
      return acquired.fence;
    };
    const publication = async () => {
      const observed = await fences.acquire({
        scope: { ...scope, workId: "observer" },
        ownerId: "observer",
        ttlMs: 1_000,
      });
      if (observed.type !== "acquired") throw new Error("the session fence is still held");
      await fences.release({ fence: observed.fence, reason: "completed" });
      return observed.publication;
    };
    return { clock, fences, journal, driver, reconciler, outcomes, abandon, publication };
  };

  it("ends the harness, checkpoints the sandbox, publishes it as the next revision and then reaps it", async () => {
    const { clock, journal, driver, reconciler, outcomes, abandon, publication } = await setup();
    await abandon("rt-killed");
    // While the dead host's fence has not expired, the run counts as live: nothing is touched.
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      held: 1,
      salvaged: 0,
      reaped: 0,
    });
    await clock.advance(TTL);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      salvaged: 1,
      superseded: 0,
      reaped: 1,
    });
    expect(driver.calls).toEqual([
      "end rt-killed",
      "checkpoint rt-killed harness=false",
      "reap rt-killed",
    ]);
    expect(outcomes).toEqual([{ type: "salvaged", revision: 2, generation: 3 }]);
    expect(await publication()).toMatchObject({
      revision: 2,
      generation: 3,
      workspaceCandidate: { id: "wcp-rt-killed", contentHash: "sha256:a.txt,rt-killed.txt" },
    });
    expect(await journal.list({ limit: 10 })).toEqual([]);
  });

  it("publishes nothing when a newer revision was published meanwhile, and still reaps", async () => {
    const { clock, fences, driver, reconciler, outcomes, abandon, publication } = await setup();
    await abandon("rt-killed");
    await clock.advance(TTL);
    // The platform re-issued the turn to another worker, which published revision 2 first.
    const newer = await fences.acquire({
      scope: { ...scope, workId: "work-3" },
      ownerId: "host-c",
      ttlMs: TTL,
    });
    if (newer.type !== "acquired") throw new Error("expected acquired");
    await fences.publish({
      fence: newer.fence,
      workspaceCandidate: { id: "wcp-newer", contentHash: "sha256:newer" },
      outputCandidate: null,
    });
    await fences.release({ fence: newer.fence, reason: "completed" });
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      salvaged: 0,
      superseded: 1,
      reaped: 1,
    });
    expect(outcomes).toEqual([{ type: "superseded" }]);
    expect(driver.calls).toEqual(["reap rt-killed"]);
    expect(await publication()).toMatchObject({
      revision: 2,
      workspaceCandidate: { id: "wcp-newer" },
    });
  });

  it("leaves the record alone while a live run holds the session, and salvages nothing once it published", async () => {
    const { clock, fences, driver, reconciler, abandon, publication, journal } = await setup();
    await abandon("rt-killed");
    await clock.advance(TTL);
    const live = await fences.acquire({
      scope: { ...scope, workId: "work-3" },
      ownerId: "host-c",
      ttlMs: TTL * 4,
    });
    if (live.type !== "acquired") throw new Error("expected acquired");
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({ held: 1, reaped: 0 });
    expect(await journal.list({ limit: 10 })).toHaveLength(1);
    await fences.publish({
      fence: live.fence,
      workspaceCandidate: { id: "wcp-live", contentHash: "sha256:live" },
      outputCandidate: null,
    });
    await fences.release({ fence: live.fence, reason: "completed" });
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      superseded: 1,
      reaped: 1,
    });
    expect(driver.calls).toEqual(["reap rt-killed"]);
    expect((await publication())?.workspaceCandidate.id).toBe("wcp-live");
  });

  it("only reaps a record without a start revision, a sandbox that is gone and one whose checkpoint fails", async () => {
    const { clock, driver, reconciler, abandon, publication } = await setup();
    await abandon("rt-unmarked", null);
    await clock.advance(TTL);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      salvaged: 0,
      salvageFailed: 0,
      reaped: 1,
    });
    await abandon("rt-gone");
    driver.runtimes.delete("rt-gone");
    await clock.advance(TTL);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      salvaged: 0,
      salvageFailed: 1,
      reaped: 1,
    });
    await abandon("rt-refused");
    driver.failCheckpoints();
    await clock.advance(TTL);
    expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
      salvaged: 0,
      salvageFailed: 1,
      reaped: 1,
    });
    expect(driver.calls).toEqual([
      "reap rt-unmarked",
      "end rt-gone",
      "reap rt-gone",
      "end rt-refused",
      "checkpoint rt-refused harness=false",
      "reap rt-refused",
    ]);
    expect(await publication()).toMatchObject({ revision: 1, workspaceCandidate: base });
  });

  it("refuses salvage without a journal or a fence port that can publish if latest, as invalid_config", async () => {
    const { journal, driver } = await setup();
    const orphans = createMemoryOrphanPort();
    expect(() =>
      createManagedRuntimeOrphanReconciler({
        orphans,
        sandbox: driver.sandbox,
        salvage: driver.salvage,
      }),
    ).toThrow(/salvage/);
    expect(() =>
      createManagedRuntimeOrphanReconciler({
        orphans,
        sandbox: driver.sandbox,
        journal,
        fences: { isGenerationCurrent: async () => false },
        salvage: driver.salvage,
      }),
    ).toThrow(/publishIfLatest/);
  });
});
