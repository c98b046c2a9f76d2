import { describe, expect, it } from "vitest";
import {
  ManagedRuntimeError,
  type RuntimeOrphanPort,
  type RuntimeResourceScope,
  parseRuntimeOrphanRecord,
  runtimeOrphanId,
} from "@open-managed-agents/runtime-resource-contract";
import { type ManualTime, createManualTime } from "../time.js";
import { MAX_ORPHAN_ERROR_LENGTH } from "./orphan-inputs.js";

/** Builds an empty orphan port under test. */
export type OrphanPortFactory = (context: {
  readonly clock: ManualTime;
}) => Promise<RuntimeOrphanPort>;

const scope = (workId: string): RuntimeResourceScope => ({
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "session-1",
  workId,
});
const sandbox = (runtimeId: string) => ({
  provider: "test",
  runtimeId,
  metadata: { region: "local", cpu: 2, warm: false, zone: null },
});
const orphan = (workId: string, error = "terminate failed: connection reset") => ({
  scope: scope(workId),
  generation: 3,
  ownerId: "owner-a",
  sandbox: sandbox(`rt-${workId}`),
  reason: "failed" as const,
  error,
});

/** The behaviour every {@link RuntimeOrphanPort} in this package shares. */
export function describeOrphanPortSuite(name: string, factory: OrphanPortFactory): void {
  describe(`orphan port: ${name}`, () => {
    const setup = async () => {
      const clock = createManualTime();
      return { clock, orphans: await factory({ clock }) };
    };

    it("records an orphan with one attempt, its lease and no token", async () => {
      const { clock, orphans } = await setup();
      const record = await orphans.enqueue(orphan("work-1"));
      const now = new Date(clock.now()).toISOString();
      expect(record).toEqual({
        id: runtimeOrphanId(scope("work-1"), 3, sandbox("rt-work-1")),
        scope: scope("work-1"),
        generation: 3,
        ownerId: "owner-a",
        sandbox: sandbox("rt-work-1"),
        reason: "failed",
        attempts: 1,
        lastError: "terminate failed: connection reset",
        createdAt: now,
        updatedAt: now,
      });
      expect(parseRuntimeOrphanRecord(record)).toEqual(record);
      const [listed] = await orphans.list({ limit: 10 });
      expect(listed).toEqual(record);
      expect(JSON.stringify(listed).toLowerCase()).not.toContain("token");
    });

    it("is idempotent by id: a second enqueue bumps attempts and replaces the error", async () => {
      const { clock, orphans } = await setup();
      const first = await orphans.enqueue(orphan("work-1", "first failure"));
      await clock.advance(5000);
      const second = await orphans.enqueue({
        ...orphan("work-1", "second failure"),
        reason: "lease_lost",
      });
      expect(second).toEqual({
        ...first,
        attempts: 2,
        lastError: "second failure",
        updatedAt: new Date(clock.now()).toISOString(),
      });
      expect(await orphans.list({ limit: 10 })).toEqual([second]);
    });

    it("lists unresolved orphans oldest first, up to the limit", async () => {
      const { clock, orphans } = await setup();
      await orphans.enqueue(orphan("work-a"));
      await clock.advance(10);
      await orphans.enqueue(orphan("work-b"));
      await orphans.enqueue(orphan("work-c"));
      await clock.advance(10);
      await orphans.enqueue(orphan("work-a", "again"));
      await orphans.enqueue(orphan("work-d"));
      const order = (records: readonly { scope: RuntimeResourceScope }[]) =>
        records.map((record) => record.scope.workId);
      expect(order(await orphans.list({ limit: 10 }))).toEqual([
        "work-a",
        "work-b",
        "work-c",
        "work-d",
      ]);
      expect(order(await orphans.list({ limit: 2 }))).toEqual(["work-a", "work-b"]);
    });

    it("records failed attempts, ignoring unknown ids", async () => {
      const { clock, orphans } = await setup();
      const record = await orphans.enqueue(orphan("work-1"));
      await clock.advance(1000);
      await orphans.failed({ id: record.id, error: "reap failed: 503" });
      await orphans.failed({ id: record.id, error: "reap failed: 504" });
      await orphans.failed({ id: "missing", error: "nobody" });
      expect(await orphans.list({ limit: 10 })).toEqual([
        {
          ...record,
          attempts: 3,
          lastError: "reap failed: 504",
          updatedAt: new Date(clock.now()).toISOString(),
        },
      ]);
    });

    it("resolves idempotently and starts afresh when the same runtime is orphaned again", async () => {
      const { clock, orphans } = await setup();
      const record = await orphans.enqueue(orphan("work-1"));
      await orphans.failed({ id: record.id, error: "once" });
      await orphans.resolve({ id: record.id });
      await orphans.resolve({ id: record.id });
      await orphans.resolve({ id: "missing" });
      expect(await orphans.list({ limit: 10 })).toEqual([]);
      await clock.advance(50);
      const again = await orphans.enqueue(orphan("work-1"));
      expect(again).toMatchObject({
        id: record.id,
        attempts: 1,
        createdAt: new Date(clock.now()).toISOString(),
      });
    });

    it("keeps records of distinct generations and runtimes apart", async () => {
      const { orphans } = await setup();
      await orphans.enqueue(orphan("work-1"));
      await orphans.enqueue({ ...orphan("work-1"), generation: 4 });
      await orphans.enqueue({ ...orphan("work-1"), sandbox: sandbox("rt-other") });
      const records = await orphans.list({ limit: 10 });
      expect(new Set(records.map((record) => record.id)).size).toBe(3);
      expect(records.every((record) => record.attempts === 1)).toBe(true);
    });

    it("bounds stored error messages", async () => {
      const { orphans } = await setup();
      const record = await orphans.enqueue(
        orphan("work-1", "x".repeat(MAX_ORPHAN_ERROR_LENGTH * 3)),
      );
      expect(record.lastError).toHaveLength(MAX_ORPHAN_ERROR_LENGTH);
      await orphans.failed({ id: record.id, error: "y".repeat(MAX_ORPHAN_ERROR_LENGTH + 1) });
      const [listed] = await orphans.list({ limit: 1 });
      expect(listed?.lastError).toHaveLength(MAX_ORPHAN_ERROR_LENGTH);
      expect(listed?.lastError.endsWith("…")).toBe(true);
    });

    it("rejects malformed input with invalid_request", async () => {
      const { orphans } = await setup();
      const attempts: Promise<unknown>[] = [
        orphans.enqueue({ ...orphan("work-1"), sandbox: { provider: "", runtimeId: "rt" } }),
        orphans.enqueue({
          ...orphan("work-1"),
          sandbox: {
            provider: "p",
            runtimeId: "rt",
            metadata: { nested: {} as unknown as string },
          },
        }),
        orphans.enqueue({ ...orphan("work-1"), reason: "bored" as "failed" }),
        orphans.list({ limit: 0 }),
        orphans.failed({ id: "", error: "x" }),
        orphans.resolve({ id: "" }),
      ];
      for (const attempt of attempts) {
        await expect(attempt).rejects.toSatisfy((error: unknown) =>
          ManagedRuntimeError.hasCode(error, "invalid_request"),
        );
      }
      expect(await orphans.list({ limit: 10 })).toEqual([]);
    });
  });
}
