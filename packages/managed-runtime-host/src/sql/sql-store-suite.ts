import { describe, expect, it } from "vitest";
import {
  ManagedRuntimeError,
  type RuntimeResourceFence,
  type RuntimeResourceFencePort,
} from "@open-managed-agents/runtime-resource-contract";
import { createManualTime } from "../time.js";
import { applyMigrations } from "./apply-migrations.js";
import type { SqlClient } from "./sql-client.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { createSqlSandboxJournal } from "./sql-sandbox-journal.js";

/** Returns a client over a database the shipped migrations were applied to. */
export type MigratedClientFactory = () => Promise<SqlClient>;

const TTL = 30_000;
const workspaceCandidate = { id: "wcp-1", contentHash: "sha256:aa" };

/** Behaviour specific to the SQL stores: migrations, batches, stored rows, hosts sharing one database. */
export function describeSqlStoreSuite(name: string, migratedClient: MigratedClientFactory): void {
  describe(`SQL stores: ${name}`, () => {
    const scope = (sessionId: string, workId: string) => ({
      workspaceId: "ws-1",
      environmentId: "env-1",
      sessionId,
      workId,
    });
    const acquired = async (
      fences: RuntimeResourceFencePort,
      sessionId: string,
      workId: string,
      ownerId: string,
    ): Promise<RuntimeResourceFence> => {
      const result = await fences.acquire({ scope: scope(sessionId, workId), ownerId, ttlMs: TTL });
      if (result.type !== "acquired") throw new Error(`expected acquired, got ${result.type}`);
      return result.fence;
    };

    it("applies each migration once", async () => {
      const client = await migratedClient();
      expect(await applyMigrations(client)).toEqual([]);
      const extra = {
        name: "0099_test_extra",
        sql: "CREATE TABLE IF NOT EXISTS test_extra (id TEXT); -- trailing comment\n",
      };
      expect(await applyMigrations(client, { migrations: [extra] })).toEqual(["0099_test_extra"]);
      expect(await applyMigrations(client, { migrations: [extra] })).toEqual([]);
      const names = await client.all<{ name: string }>(
        "SELECT name FROM runtime_resource_migrations ORDER BY name",
        [],
      );
      expect(names.map((row) => row.name)).toEqual([
        "0001_runtime_resources",
        "0002_sandbox_journal",
        "0002_sandbox_journal_start_revision",
        "0099_test_extra",
      ]);
    });

    it("applies a migration whose literals, identifiers and comments hold ; and --", async () => {
      const client = await migratedClient();
      const sql = [
        "/* a block comment; with -- inside */",
        "CREATE TABLE IF NOT EXISTS \"odd;--table\" (id INTEGER PRIMARY KEY, note TEXT NOT NULL DEFAULT 'a;b -- c');",
        "-- a line comment; with a semicolon",
        "INSERT INTO \"odd;--table\" (id, note) VALUES (1, 'it''s; -- not a comment'), (2, '/* not a comment; */') ON CONFLICT DO NOTHING;",
        'INSERT INTO "odd;--table" (id) VALUES (3) ON CONFLICT DO NOTHING; /* tail */',
      ].join("\n");
      expect(
        await applyMigrations(client, { migrations: [{ name: "0003_test_literals", sql }] }),
      ).toEqual(["0003_test_literals"]);
      const rows = await client.all<{ id: number; note: string }>(
        'SELECT id, note FROM "odd;--table" ORDER BY id',
        [],
      );
      expect(rows).toEqual([
        { id: 1, note: "it's; -- not a comment" },
        { id: 2, note: "/* not a comment; */" },
        { id: 3, note: "a;b -- c" },
      ]);
    });

    it("refuses invalid migration options as invalid_config", async () => {
      const client = await migratedClient();
      await expect(
        applyMigrations(client, { migrations: [{ name: "", sql: "SELECT 1" }] }),
      ).rejects.toSatisfy((error: unknown) => ManagedRuntimeError.hasCode(error, "invalid_config"));
    });

    it("rolls a failed batch back entirely", async () => {
      const client = await migratedClient();
      const table = `batch_${crypto.randomUUID().replaceAll("-", "")}`;
      await client.run(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY)`, []);
      const insert = { sql: `INSERT INTO ${table} (id) VALUES (?)`, params: [1] };
      await expect(
        client.batch([insert, { ...insert, sql: `${insert.sql} -- again` }]),
      ).rejects.toSatisfy((error: unknown) => ManagedRuntimeError.hasCode(error, "internal"));
      expect(await client.all(`SELECT id FROM ${table}`, [])).toEqual([]);
      expect(await client.batch([insert])).toEqual([{ changes: 1 }]);
      expect(await client.all(`SELECT id FROM ${table}`, [])).toEqual([{ id: 1 }]);
    });

    it("stores a digest of the token, never the token", async () => {
      const client = await migratedClient();
      const fences = createSqlFencePort({ client, clock: createManualTime() });
      const fence = await acquired(fences, `session-${crypto.randomUUID()}`, "work-1", "owner-a");
      await fences.publish({ fence, workspaceCandidate, outputCandidate: null });
      const rows = await client.all("SELECT * FROM runtime_resource_fences", []);
      expect(JSON.stringify(rows)).not.toContain(fence.token);
      expect(JSON.stringify(rows)).not.toContain(fence.token.slice(0, 36));
    });

    it("lets a host whose clock runs ahead take over, and fences the other host out", async () => {
      const client = await migratedClient();
      const slow = createManualTime();
      const fast = createManualTime(slow.now() + TTL);
      const hostA = createSqlFencePort({ client, clock: slow });
      const hostB = createSqlFencePort({ client, clock: fast });
      const session = `session-${crypto.randomUUID()}`;
      const fenceA = await acquired(hostA, session, "work-1", "owner-a");
      const fenceB = await acquired(hostB, session, "work-2", "owner-b");
      expect(fenceB.generation).toBe(fenceA.generation + 1);
      // Host A still believes its fence is unexpired, yet every write is refused.
      expect(await hostA.renew({ fence: fenceA, ttlMs: TTL })).toEqual({ type: "lost" });
      expect(
        await hostA.publish({ fence: fenceA, workspaceCandidate, outputCandidate: null }),
      ).toEqual({ type: "lost" });
      expect(await hostA.isCurrent(fenceA)).toBe(false);
      expect(
        await hostB.publish({ fence: fenceB, workspaceCandidate, outputCandidate: null }),
      ).toEqual({ type: "published", revision: 1 });
    });

    it("lets exactly one of many hosts sharing the database acquire", async () => {
      const client = await migratedClient();
      const clock = createManualTime();
      const session = `session-${crypto.randomUUID()}`;
      const hosts = Array.from({ length: 8 }, () => createSqlFencePort({ client, clock }));
      const results = await Promise.all(
        hosts.map((host, index) =>
          host.acquire({
            scope: scope(session, `work-${index}`),
            ownerId: `owner-${index}`,
            ttlMs: TTL,
          }),
        ),
      );
      expect(results.filter((result) => result.type === "acquired")).toHaveLength(1);
    });

    it("reports a corrupt stored publication as integrity_failed", async () => {
      const client = await migratedClient();
      const fences = createSqlFencePort({ client, clock: createManualTime() });
      const session = `session-${crypto.randomUUID()}`;
      const fence = await acquired(fences, session, "work-1", "owner-a");
      await fences.publish({ fence, workspaceCandidate, outputCandidate: null });
      await fences.release({ fence, reason: "completed" });
      await client.run("UPDATE runtime_resource_fences SET publication = ? WHERE session_id = ?", [
        '{"workspaceCandidate":{"id":""}}',
        session,
      ]);
      await expect(
        fences.acquire({ scope: scope(session, "work-2"), ownerId: "owner-a", ttlMs: TTL }),
      ).rejects.toSatisfy((error: unknown) =>
        ManagedRuntimeError.hasCode(error, "integrity_failed"),
      );
      await client.run("UPDATE runtime_resource_fences SET publication = ? WHERE session_id = ?", [
        "{not json",
        session,
      ]);
      await expect(
        fences.acquire({ scope: scope(session, "work-2"), ownerId: "owner-a", ttlMs: TTL }),
      ).rejects.toSatisfy((error: unknown) =>
        ManagedRuntimeError.hasCode(error, "integrity_failed"),
      );
    });

    it("reads a journal row written before start_revision existed as an unknown start revision", async () => {
      const client = await migratedClient();
      const journal = createSqlSandboxJournal({ client, clock: createManualTime() });
      const id = `old-${crypto.randomUUID()}`;
      await client.run(
        `INSERT INTO sandbox_journal (id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox,
           attempts, last_error, created_at, updated_at) VALUES (?, 'ws-1', 'env-1', 's-1', 'w-1', 1, 'owner-a', ?, 0, '', 1, 1)`,
        [id, JSON.stringify({ provider: "test", runtimeId: "rt-old" })],
      );
      const recorded = await journal.record({
        scope: scope("s-1", "w-2"),
        generation: 2,
        ownerId: "owner-a",
        sandbox: { provider: "test", runtimeId: "rt-new" },
      });
      await journal.setStartRevision({ id: recorded.id, startRevision: 4 });
      const listed = await journal.list({ limit: 10 });
      expect(listed.map((record) => [record.id, record.startRevision])).toEqual([
        [id, null],
        [recorded.id, 4],
      ]);
    });

    it("refuses a store without a SqlClient as invalid_config", () => {
      for (const create of [createSqlFencePort, createSqlOrphanPort, createSqlSandboxJournal]) {
        expect(() => create({ client: { all: () => [] } as never })).toThrow(/client/);
      }
    });
  });
}
