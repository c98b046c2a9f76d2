import { describe, expect, it } from "vitest";
import {
  ManagedRuntimeError,
  type RuntimeResourceScope,
  type SandboxJournalPort,
  sandboxJournalId,
} from "@open-managed-agents/runtime-resource-contract";
import { type ManualTime, createManualTime } from "../time.js";

/** Builds an empty sandbox journal under test. */
export type JournalPortFactory = (context: {
  readonly clock: ManualTime;
}) => Promise<SandboxJournalPort>;

const scope = (workId: string): RuntimeResourceScope => ({
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "session-1",
  workId,
});
const sandbox = (runtimeId: string) => ({
  provider: "test",
  runtimeId,
  metadata: { region: "local", cpu: 2 },
});
const entry = (workId: string, generation = 4) => ({
  scope: scope(workId),
  generation,
  ownerId: "owner-a",
  sandbox: sandbox(`rt-${workId}`),
});

/** The behaviour every {@link SandboxJournalPort} in this package shares. */
export function describeJournalPortSuite(name: string, factory: JournalPortFactory): void {
  describe(`sandbox journal: ${name}`, () => {
    const setup = async () => {
      const clock = createManualTime();
      return { clock, journal: await factory({ clock }) };
    };

    it("records the lease-to-be with no attempts, keyed like the orphan of the same lease", async () => {
      const { clock, journal } = await setup();
      const record = await journal.record(entry("work-1"));
      const now = new Date(clock.now()).toISOString();
      expect(record).toEqual({
        id: sandboxJournalId(scope("work-1"), 4, sandbox("rt-work-1")),
        scope: scope("work-1"),
        generation: 4,
        ownerId: "owner-a",
        startRevision: null,
        sandbox: sandbox("rt-work-1"),
        attempts: 0,
        lastError: "",
        createdAt: now,
        updatedAt: now,
      });
      expect(await journal.list({ limit: 10 })).toEqual([record]);
    });

    it("sets and clears the revision a run started from, per record, and ignores a missing record", async () => {
      const { journal } = await setup();
      const first = await journal.record(entry("work-1"));
      const second = await journal.record(entry("work-2"));
      await journal.setStartRevision({ id: first.id, startRevision: 7 });
      await journal.setStartRevision({ id: second.id, startRevision: 0 });
      await journal.setStartRevision({ id: "no-such-record", startRevision: 3 });
      expect(
        (await journal.list({ limit: 10 })).map((record) => [record.id, record.startRevision]),
      ).toEqual([
        [first.id, 7],
        [second.id, 0],
      ]);
      // Recording the same lease again keeps the revision; clearing it leaves the record to be reaped only.
      expect((await journal.record(entry("work-1"))).startRevision).toBe(7);
      await journal.setStartRevision({ id: first.id, startRevision: null });
      expect((await journal.list({ limit: 10 })).map((record) => record.startRevision)).toEqual([
        null,
        0,
      ]);
      for (const startRevision of [-1, 1.5, "2"]) {
        const error = await journal.setStartRevision({ id: first.id, startRevision } as never).then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(ManagedRuntimeError.hasCode(error, "invalid_request")).toBe(true);
      }
    });

    it("keeps the first record when the same lease is recorded again", async () => {
      const { clock, journal } = await setup();
      const first = await journal.record(entry("work-1"));
      await clock.advance(5_000);
      await journal.failed({ id: first.id, error: "delete unconfirmed" });
      const again = await journal.record(entry("work-1"));
      expect(again.createdAt).toBe(first.createdAt);
      expect(again.attempts).toBe(1);
      expect(await journal.list({ limit: 10 })).toHaveLength(1);
    });

    it("lists oldest first, bounded by limit, and tells generations apart", async () => {
      const { clock, journal } = await setup();
      await journal.record(entry("work-1"));
      await clock.advance(1);
      await journal.record(entry("work-2"));
      await journal.record(entry("work-2", 5));
      const listed = await journal.list({ limit: 2 });
      expect(listed.map((record) => [record.scope.workId, record.generation])).toEqual([
        ["work-1", 4],
        ["work-2", 4],
      ]);
      expect(await journal.list({ limit: 10 })).toHaveLength(3);
    });

    it("lists the records of one session, any work item, oldest first, bounded by limit", async () => {
      const { clock, journal } = await setup();
      await journal.record(entry("work-1"));
      await clock.advance(1);
      await journal.record({
        ...entry("work-9"),
        scope: { ...scope("work-9"), sessionId: "session-2" },
      });
      await journal.record({
        ...entry("work-8"),
        scope: { ...scope("work-8"), environmentId: "env-2" },
      });
      await journal.record(entry("work-2", 5));
      await clock.advance(1);
      await journal.record(entry("work-3", 6));
      const listed = await journal.listSession({ scope: scope("any"), limit: 10 });
      expect(listed.map((record) => [record.scope.workId, record.generation])).toEqual([
        ["work-1", 4],
        ["work-2", 5],
        ["work-3", 6],
      ]);
      expect(await journal.listSession({ scope: scope("any"), limit: 1 })).toHaveLength(1);
      await expect(journal.listSession({ scope: scope("any"), limit: 0 })).rejects.toSatisfy(
        (error) => ManagedRuntimeError.hasCode(error, "invalid_request"),
      );
    });

    it("counts failed attempts with their message and time, and resolves idempotently", async () => {
      const { clock, journal } = await setup();
      const record = await journal.record(entry("work-1"));
      await clock.advance(2_000);
      await journal.failed({ id: record.id, error: "still running after delete" });
      const [failed] = await journal.list({ limit: 1 });
      expect(failed).toMatchObject({
        attempts: 1,
        lastError: "still running after delete",
        updatedAt: new Date(clock.now()).toISOString(),
      });
      await journal.resolve({ id: record.id });
      await journal.resolve({ id: record.id });
      await journal.failed({ id: record.id, error: "late" });
      expect(await journal.list({ limit: 10 })).toEqual([]);
    });

    it("rejects malformed input with invalid_request", async () => {
      const { journal } = await setup();
      const invalid = (error: unknown) => ManagedRuntimeError.hasCode(error, "invalid_request");
      await expect(
        journal.record({ ...entry("work-1"), sandbox: { provider: "", runtimeId: "x" } }),
      ).rejects.toSatisfy(invalid);
      await expect(journal.record({ ...entry("work-1"), generation: -1 })).rejects.toSatisfy(
        invalid,
      );
      await expect(journal.list({ limit: 0 })).rejects.toSatisfy(invalid);
      await expect(journal.resolve({ id: "" })).rejects.toSatisfy(invalid);
    });
  });
}
