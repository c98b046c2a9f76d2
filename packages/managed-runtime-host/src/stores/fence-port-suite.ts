import { describe, expect, it } from "vitest";
import {
  type FenceAcquireResult,
  ManagedRuntimeError,
  type RuntimeCheckpointRef,
  type RuntimeResourceFence,
  type RuntimeResourceFencePort,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { type ManualTime, createManualTime } from "../time.js";

/** Builds a fence port under test. Ports built for different tests may share storage. */
export type FencePortFactory = (context: {
  readonly clock: ManualTime;
}) => Promise<RuntimeResourceFencePort>;

const TTL = 30_000;
const workspaceCandidate = {
  id: "wcp-1",
  contentHash: "sha256:aa",
  metadata: { bytes: 10, archive: "tar" },
};
const outputCandidate = { id: "out-1", contentHash: "sha256:bb" };

/**
 * The behaviour every {@link RuntimeResourceFencePort} in this package shares: exclusivity per
 * session, strictly increasing generations, expiry, compare-and-set publish and races.
 */
export function describeFencePortSuite(name: string, factory: FencePortFactory): void {
  describe(`fence port: ${name}`, () => {
    const setup = async () => {
      const clock = createManualTime();
      const fences = await factory({ clock });
      const session = `session-${crypto.randomUUID()}`;
      const scope = (workId = "work-1", sessionId = session): RuntimeResourceScope => ({
        workspaceId: "ws-1",
        environmentId: "env-1",
        sessionId,
        workId,
      });
      const acquire = async (
        workId = "work-1",
        ownerId = "owner-a",
        ttlMs = TTL,
      ): Promise<RuntimeResourceFence> => {
        const result = await fences.acquire({ scope: scope(workId), ownerId, ttlMs });
        if (result.type !== "acquired") throw new Error(`expected acquired, got ${result.type}`);
        return result.fence;
      };
      return { clock, fences, scope, acquire };
    };

    it("acquires a fresh session at generation 1 with no publication", async () => {
      const { clock, fences, scope } = await setup();
      const result = await fences.acquire({ scope: scope(), ownerId: "owner-a", ttlMs: TTL });
      expect(result).toMatchObject({ type: "acquired", publication: null });
      const fence = (result as Extract<FenceAcquireResult, { type: "acquired" }>).fence;
      expect(fence).toMatchObject({
        ...scope(),
        ownerId: "owner-a",
        generation: 1,
        expiresAt: new Date(clock.now() + TTL).toISOString(),
      });
      expect(fence.token.length).toBeGreaterThanOrEqual(48);
    });

    it("gives every fence a different token", async () => {
      const { fences, acquire } = await setup();
      const first = await acquire();
      await fences.release({ fence: first, reason: "completed" });
      const second = await acquire();
      expect(second.token).not.toBe(first.token);
    });

    it("refuses a second work item of the same session while the fence is held", async () => {
      const { clock, fences, scope, acquire } = await setup();
      await acquire("work-1", "owner-a");
      const conflict = await fences.acquire({
        scope: scope("work-2"),
        ownerId: "owner-b",
        ttlMs: TTL,
      });
      expect(conflict).toEqual({
        type: "conflict",
        expiresAt: new Date(clock.now() + TTL).toISOString(),
      });
      const sameWorkOtherOwner = await fences.acquire({
        scope: scope("work-1"),
        ownerId: "owner-b",
        ttlMs: TTL,
      });
      expect(sameWorkOtherOwner.type).toBe("conflict");
      const otherSession = await fences.acquire({
        scope: scope("work-2", `${scope().sessionId}-other`),
        ownerId: "owner-b",
        ttlMs: TTL,
      });
      expect(otherSession).toMatchObject({ type: "acquired", fence: { generation: 1 } });
    });

    it("lets the holder re-acquire its own work item, superseding its older fence", async () => {
      const { fences, acquire } = await setup();
      const older = await acquire("work-1", "owner-a");
      const newer = await acquire("work-1", "owner-a");
      expect(newer.generation).toBe(older.generation + 1);
      expect(await fences.isCurrent(older)).toBe(false);
      expect(await fences.renew({ fence: older, ttlMs: TTL })).toEqual({ type: "lost" });
      expect(await fences.isCurrent(newer)).toBe(true);
    });

    it("treats an expired fence as lost everywhere and lets another owner take over", async () => {
      const { clock, fences, acquire } = await setup();
      const fence = await acquire("work-1", "owner-a");
      await clock.advance(TTL);
      expect(await fences.isCurrent(fence)).toBe(false);
      expect(await fences.renew({ fence, ttlMs: TTL })).toEqual({ type: "lost" });
      expect(await fences.publish({ fence, workspaceCandidate, outputCandidate })).toEqual({
        type: "lost",
      });
      const next = await acquire("work-2", "owner-b");
      expect(next.generation).toBe(2);
      expect(await fences.renew({ fence, ttlMs: TTL })).toEqual({ type: "lost" });
    });

    it("keeps the fence current until its expiry instant", async () => {
      const { clock, fences, acquire } = await setup();
      const fence = await acquire();
      await clock.advance(TTL - 1);
      expect(await fences.isCurrent(fence)).toBe(true);
      await clock.advance(1);
      expect(await fences.isCurrent(fence)).toBe(false);
    });

    it("answers token-free whether a generation's run still holds the fence, rotated or not", async () => {
      const { clock, fences, scope, acquire } = await setup();
      const first = await acquire("work-1", "owner-a");
      const current = (workId: string, generation: number, ownerId = "owner-a") =>
        fences.isGenerationCurrent({ scope: scope(workId), generation, ownerId });
      expect(await current("work-1", first.generation)).toBe(true);
      expect(await current("work-other", first.generation)).toBe(false);
      expect(await current("work-1", first.generation, "owner-b")).toBe(false);
      expect(await current("work-1", first.generation + 1)).toBe(false);
      // A live checkpoint's rotation: the same owner and work item move on to the next generation, and a
      // sandbox journaled under the first is still held by the same live run.
      const second = await acquire("work-1", "owner-a");
      expect(await current("work-1", first.generation)).toBe(true);
      expect(await current("work-1", second.generation)).toBe(true);
      expect(await current("work-1", first.generation, "owner-b")).toBe(false);
      await fences.release({ fence: second, reason: "completed" });
      expect(await current("work-1", first.generation)).toBe(false);
      expect(await current("work-1", second.generation)).toBe(false);
      const third = await acquire("work-2", "owner-b");
      expect(await current("work-1", first.generation)).toBe(false);
      expect(await current("work-2", first.generation)).toBe(false);
      expect(await current("work-2", third.generation, "owner-b")).toBe(true);
      await clock.advance(TTL);
      expect(await current("work-2", third.generation, "owner-b")).toBe(false);
      // Another owner takes the expired fence over: the rotated run's records are no longer held.
      const fourth = await acquire("work-2", "owner-c");
      expect(await current("work-2", third.generation, "owner-b")).toBe(false);
      expect(await current("work-2", fourth.generation, "owner-c")).toBe(true);
      const invalid = (error: unknown) => ManagedRuntimeError.hasCode(error, "invalid_request");
      const ask = (generation: number, ownerId: string) =>
        fences.isGenerationCurrent({ scope: scope(), generation, ownerId });
      await expect(ask(-1, "owner-a")).rejects.toSatisfy(invalid);
      await expect(ask(1, "")).rejects.toSatisfy(invalid);
    });

    it("increases generations strictly across release, expiry and owners", async () => {
      const { clock, fences, acquire } = await setup();
      const generations: number[] = [];
      for (const [index, ownerId] of ["owner-a", "owner-b", "owner-c", "owner-a"].entries()) {
        const fence = await acquire(`work-${index}`, ownerId);
        generations.push(fence.generation);
        if (index % 2 === 0) await fences.release({ fence, reason: "completed" });
        else await clock.advance(TTL + 1);
      }
      expect(generations).toEqual([1, 2, 3, 4]);
    });

    it("renews a current fence from the current time", async () => {
      const { clock, fences, acquire } = await setup();
      const fence = await acquire();
      await clock.advance(TTL - 1000);
      const renewed = await fences.renew({ fence, ttlMs: TTL });
      expect(renewed).toEqual({
        type: "renewed",
        fence: { ...fence, expiresAt: new Date(clock.now() + TTL).toISOString() },
      });
      await clock.advance(TTL - 1000);
      expect(await fences.isCurrent(fence)).toBe(true);
      expect(await fences.publish({ fence, workspaceCandidate, outputCandidate: null })).toEqual({
        type: "published",
        revision: 1,
      });
    });

    it("publishes only for the exact current generation and token", async () => {
      const { fences, acquire } = await setup();
      const fence = await acquire();
      const wrongToken = { ...fence, token: `${fence.token.slice(0, -4)}0000` };
      const staleGeneration = { ...fence, generation: fence.generation + 1 };
      const otherWork = { ...fence, workId: "work-9" };
      for (const candidate of [wrongToken, staleGeneration, otherWork]) {
        expect(
          await fences.publish({ fence: candidate, workspaceCandidate, outputCandidate }),
        ).toEqual({ type: "lost" });
        expect(await fences.isCurrent(candidate)).toBe(false);
        expect(await fences.renew({ fence: candidate, ttlMs: TTL })).toEqual({ type: "lost" });
      }
      expect(await fences.publish({ fence, workspaceCandidate, outputCandidate })).toEqual({
        type: "published",
        revision: 1,
      });
    });

    it("refuses a second publish with the same generation", async () => {
      const { fences, acquire } = await setup();
      const fence = await acquire();
      expect(await fences.publish({ fence, workspaceCandidate, outputCandidate })).toEqual({
        type: "published",
        revision: 1,
      });
      expect(await fences.publish({ fence, workspaceCandidate, outputCandidate })).toEqual({
        type: "lost",
      });
      expect(await fences.isCurrent(fence)).toBe(true);
    });

    it("refuses a publish from a fence superseded by a takeover", async () => {
      const { clock, fences, acquire } = await setup();
      const stale = await acquire("work-1", "owner-a");
      await clock.advance(TTL);
      const current = await acquire("work-2", "owner-b");
      expect(await fences.publish({ fence: stale, workspaceCandidate, outputCandidate })).toEqual({
        type: "lost",
      });
      await fences.release({ fence: stale, reason: "lease_lost" });
      expect(await fences.isCurrent(current)).toBe(true);
    });

    it("hands the publication to the next work item of the session", async () => {
      const { fences, scope, acquire } = await setup();
      const first = await acquire("work-1");
      const runtimeCheckpoint: RuntimeCheckpointRef = {
        provider: "test",
        checkpointId: "cp-1",
        kind: "filesystem",
        sourceRuntimeId: "rt-1",
        sessionId: first.sessionId,
        workGeneration: first.generation,
        workspaceRevision: 1,
        harnessVersion: "1.0.0",
        runtimeIdentity: "{}",
      };
      await fences.publish({
        fence: first,
        workspaceCandidate,
        outputCandidate: null,
        runtimeCheckpoint,
      });
      await fences.release({ fence: first, reason: "completed" });
      const next = await fences.acquire({ scope: scope("work-2"), ownerId: "owner-b", ttlMs: TTL });
      expect(next).toMatchObject({
        type: "acquired",
        fence: { generation: 2 },
        publication: {
          generation: 1,
          revision: 1,
          workspaceCandidate,
          outputCandidate: null,
          runtimeCheckpoint,
        },
      });
      const second = (next as Extract<FenceAcquireResult, { type: "acquired" }>).fence;
      expect(
        await fences.publish({
          fence: second,
          workspaceCandidate: { id: "wcp-2", contentHash: "sha256:cc" },
          outputCandidate,
        }),
      ).toEqual({
        type: "published",
        revision: 2,
      });
      await fences.release({ fence: second, reason: "completed" });
      const third = await fences.acquire({
        scope: scope("work-3"),
        ownerId: "owner-a",
        ttlMs: TTL,
      });
      expect(third).toMatchObject({
        publication: {
          generation: 2,
          revision: 2,
          workspaceCandidate: { id: "wcp-2" },
          outputCandidate,
          runtimeCheckpoint: null,
        },
      });
    });

    it("lets exactly one of many concurrent publishes win", async () => {
      const { fences, acquire } = await setup();
      const fence = await acquire();
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, index) =>
          fences.publish({
            fence,
            workspaceCandidate: { id: `wcp-${index}`, contentHash: "sha256:aa" },
            outputCandidate: null,
          }),
        ),
      );
      expect(results.filter((result) => result.type === "published")).toEqual([
        { type: "published", revision: 1 },
      ]);
      expect(results.filter((result) => result.type === "lost")).toHaveLength(23);
    });

    it("publishes if latest only while the session is still at the expected revision", async () => {
      const { clock, fences, acquire } = await setup();
      const first = await acquire("work-1", "owner-a");
      // Nothing published yet: revision 0 is the latest; any other expectation is refused.
      expect(
        await fences.publishIfLatest({
          fence: first,
          expectedRevision: 1,
          workspaceCandidate,
          outputCandidate: null,
        }),
      ).toEqual({ type: "lost" });
      expect(
        await fences.publishIfLatest({
          fence: first,
          expectedRevision: 0,
          workspaceCandidate,
          outputCandidate: null,
        }),
      ).toEqual({
        type: "published",
        revision: 1,
      });
      await clock.advance(TTL);
      // A salvage that started from revision 0 comes after a newer publication: it publishes nothing.
      const salvage = await acquire("work-1", "reconciler");
      const newer = { id: "wcp-salvage", contentHash: "sha256:dd" };
      expect(
        await fences.publishIfLatest({
          fence: salvage,
          expectedRevision: 0,
          workspaceCandidate: newer,
          outputCandidate: null,
        }),
      ).toEqual({
        type: "lost",
      });
      await fences.release({ fence: salvage, reason: "lease_lost" });
      const observer = await fences.acquire({ scope: salvage, ownerId: "observer", ttlMs: TTL });
      expect(observer).toMatchObject({
        type: "acquired",
        publication: { revision: 1, workspaceCandidate },
      });
      // From the latest revision it publishes, once per generation, like publish.
      const fence = (observer as Extract<FenceAcquireResult, { type: "acquired" }>).fence;
      expect(
        await fences.publishIfLatest({
          fence,
          expectedRevision: 1,
          workspaceCandidate: newer,
          outputCandidate: null,
        }),
      ).toEqual({
        type: "published",
        revision: 2,
      });
      expect(
        await fences.publishIfLatest({
          fence,
          expectedRevision: 2,
          workspaceCandidate: newer,
          outputCandidate: null,
        }),
      ).toEqual({ type: "lost" });
    });

    it("refuses publish if latest from a stale, expired or foreign fence even at the latest revision", async () => {
      const { clock, fences, acquire } = await setup();
      const fence = await acquire();
      const wrongToken = { ...fence, token: `${fence.token.slice(0, -4)}0000` };
      const otherWork = { ...fence, workId: "work-9" };
      for (const candidate of [wrongToken, otherWork]) {
        expect(
          await fences.publishIfLatest({
            fence: candidate,
            expectedRevision: 0,
            workspaceCandidate,
            outputCandidate,
          }),
        ).toEqual({ type: "lost" });
      }
      await clock.advance(TTL);
      expect(
        await fences.publishIfLatest({
          fence,
          expectedRevision: 0,
          workspaceCandidate,
          outputCandidate,
        }),
      ).toEqual({ type: "lost" });
      const next = await acquire("work-2", "owner-b");
      expect(
        await fences.publishIfLatest({
          fence,
          expectedRevision: 0,
          workspaceCandidate,
          outputCandidate,
        }),
      ).toEqual({ type: "lost" });
      expect(await fences.isCurrent(next)).toBe(true);
    });

    it("lets a publish if latest lose to a racing publish of a newer generation, never both win", async () => {
      const { fences, acquire, scope } = await setup();
      const owner = await acquire("work-1", "owner-a");
      // The same owner re-acquires (a new generation) and both the old and new fence race at revision 0.
      const newer = (await fences.acquire({
        scope: scope("work-1"),
        ownerId: "owner-a",
        ttlMs: TTL,
      })) as Extract<FenceAcquireResult, { type: "acquired" }>;
      const results = await Promise.all([
        fences.publishIfLatest({
          fence: owner,
          expectedRevision: 0,
          workspaceCandidate,
          outputCandidate: null,
        }),
        ...Array.from({ length: 8 }, (_, index) =>
          fences.publishIfLatest({
            fence: newer.fence,
            expectedRevision: 0,
            workspaceCandidate: { id: `wcp-${index}`, contentHash: "sha256:aa" },
            outputCandidate: null,
          }),
        ),
      ]);
      expect(results[0]).toEqual({ type: "lost" });
      expect(results.filter((result) => result.type === "published")).toEqual([
        { type: "published", revision: 1 },
      ]);
    });

    it("rejects a malformed expected revision with invalid_request", async () => {
      const { fences, acquire } = await setup();
      const fence = await acquire();
      for (const expectedRevision of [-1, 1.5, "0", undefined]) {
        const error = await fences
          .publishIfLatest({
            fence,
            expectedRevision,
            workspaceCandidate,
            outputCandidate: null,
          } as never)
          .then(
            () => null,
            (caught: unknown) => caught,
          );
        expect(ManagedRuntimeError.hasCode(error, "invalid_request")).toBe(true);
        expect((error as Error).message).not.toContain(fence.token);
      }
    });

    it("lets exactly one of many concurrent acquires win", async () => {
      const { fences, scope } = await setup();
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, index) =>
          fences.acquire({ scope: scope(`work-${index}`), ownerId: `owner-${index}`, ttlMs: TTL }),
        ),
      );
      const winners = results.filter((result) => result.type === "acquired");
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ fence: { generation: 1 } });
      expect(results.filter((result) => result.type === "conflict")).toHaveLength(15);
    });

    it("releases idempotently, ignores a stale release and keeps the publication", async () => {
      const { fences, acquire } = await setup();
      const first = await acquire("work-1", "owner-a");
      await fences.publish({ fence: first, workspaceCandidate, outputCandidate });
      await fences.release({ fence: first, reason: "completed" });
      expect(await fences.isCurrent(first)).toBe(false);
      await fences.release({ fence: first, reason: "completed" });
      const second = await acquire("work-2", "owner-b");
      await fences.release({ fence: first, reason: "failed" });
      expect(await fences.isCurrent(second)).toBe(true);
      expect(second.generation).toBe(2);
    });

    it("rejects malformed input with invalid_request", async () => {
      const { fences, scope, acquire } = await setup();
      const fence = await acquire();
      const attempts: Promise<unknown>[] = [
        fences.acquire({ scope: scope(), ownerId: "", ttlMs: TTL }),
        fences.acquire({ scope: scope(), ownerId: "owner-a", ttlMs: 0 }),
        fences.renew({ fence, ttlMs: Number.NaN }),
        fences.publish({
          fence,
          workspaceCandidate: { id: "", contentHash: "sha256:aa" },
          outputCandidate: null,
        }),
        fences.isCurrent({ ...fence, generation: 0 }),
      ];
      for (const attempt of attempts) {
        await expect(attempt).rejects.toSatisfy((error: unknown) =>
          ManagedRuntimeError.hasCode(error, "invalid_request"),
        );
      }
    });

    it("never puts the token in an error or a conflict", async () => {
      const { fences, scope, acquire } = await setup();
      const fence = await acquire();
      const conflict = await fences.acquire({
        scope: scope("work-2"),
        ownerId: "owner-b",
        ttlMs: TTL,
      });
      expect(JSON.stringify(conflict)).not.toContain(fence.token);
      const hostile = [
        fences.renew({ fence: { ...fence, generation: -1 }, ttlMs: TTL }),
        fences.renew({ fence, ttlMs: -5 }),
        fences.publish({
          fence: { ...fence, expiresAt: fence.token },
          workspaceCandidate,
          outputCandidate,
        }),
        fences.publish({
          fence,
          workspaceCandidate: { id: fence.token, contentHash: 7 as unknown as string },
          outputCandidate,
        }),
        fences.isCurrent({ ...fence, workspaceId: "" }),
        fences.release({ fence, reason: fence.token as "completed" }),
      ];
      for (const attempt of hostile) {
        const error = await attempt.then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(ManagedRuntimeError.isInstance(error)).toBe(true);
        const managed = error as ManagedRuntimeError;
        const cause = managed.cause instanceof Error ? managed.cause.message : "";
        for (const text of [
          managed.message,
          JSON.stringify(managed.toJSON()),
          managed.stack ?? "",
          cause,
        ]) {
          expect(text).not.toContain(fence.token);
        }
      }
    });
  });
}
