import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ManagedRuntimeError,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { type PostgresCluster, startPostgresCluster } from "../../test/support/postgres-cluster.js";
import { postgresSchemas, postgresUrl } from "../../test/support/postgres-schemas.js";
import { createManualTime } from "../time.js";
import { applyMigrations } from "./apply-migrations.js";
import { type PostgresSqlClient, createPostgresSqlClient } from "./postgres-client.js";
import { numberPlaceholders } from "./postgres-placeholders.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { createSqlSandboxJournal } from "./sql-sandbox-journal.js";

const TTL = 30_000;
const scope = (sessionId: string, workId = "work-1"): RuntimeResourceScope => ({
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId,
  workId,
});
const lease = { provider: "test", runtimeId: "rt-1", metadata: {} };
const hasCode = (code: string) => (error: unknown) =>
  ManagedRuntimeError.hasCode(error, code as never);

describe("Postgres SQL client: a stopped server", () => {
  let cluster: PostgresCluster;
  let client: PostgresSqlClient;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    client = createPostgresSqlClient({
      connectionString: cluster.url,
      maxConnections: 2,
      connectTimeoutMs: 5_000,
    });
    await applyMigrations(client);
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await cluster?.remove();
  });

  it("fails every store call with unavailable while the server is down, and serves again once it is back", async () => {
    const clock = createManualTime();
    const fences = createSqlFencePort({ client, clock });
    const held = await fences.acquire({
      scope: scope("session-stop"),
      ownerId: "owner-a",
      ttlMs: TTL,
    });
    expect(held.type).toBe("acquired");
    if (held.type !== "acquired") return;

    await cluster.stop();
    await expect(
      fences.acquire({ scope: scope("session-other"), ownerId: "owner-a", ttlMs: TTL }),
    ).rejects.toSatisfy(hasCode("unavailable"));
    await expect(
      fences.publish({
        fence: held.fence,
        workspaceCandidate: { id: "w", contentHash: "sha256:aa" },
        outputCandidate: null,
      }),
    ).rejects.toSatisfy(hasCode("unavailable"));
    await expect(createSqlOrphanPort({ client, clock }).list({ limit: 10 })).rejects.toSatisfy(
      hasCode("unavailable"),
    );
    await expect(client.batch([{ sql: "SELECT 1", params: [] }])).rejects.toSatisfy(
      hasCode("unavailable"),
    );
    // No connection was made, so nothing was written: busy, which the host asks again while its fence lasts.
    await expect(fences.renew({ fence: held.fence, ttlMs: TTL })).rejects.toSatisfy(
      (error: unknown) =>
        hasCode("unavailable")(error) && (error as ManagedRuntimeError).context.busy === true,
    );

    await cluster.start();
    // The pool dropped the dead connections; the next call opens a new one and the fence is as it was.
    expect(await fences.isCurrent(held.fence)).toBe(true);
    expect(
      await fences.publish({
        fence: held.fence,
        workspaceCandidate: { id: "w", contentHash: "sha256:aa" },
        outputCandidate: null,
      }),
    ).toEqual({
      type: "published",
      revision: 1,
    });
  }, 180_000);
});

describe("Postgres SQL client: typed failures", () => {
  const schemas = postgresSchemas();

  it("reports a server nobody listens on as unavailable, without the password", async () => {
    const url = new URL(postgresUrl());
    url.password = "hunter2-secret";
    url.port = "1"; // a privileged port nothing listens on here
    const client = createPostgresSqlClient({
      connectionString: url.toString(),
      connectTimeoutMs: 5_000,
    });
    try {
      const failure = await client.all("SELECT 1", []).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(ManagedRuntimeError.hasCode(failure, "unavailable")).toBe(true);
      expect(JSON.stringify((failure as ManagedRuntimeError).toJSON())).not.toContain(
        "hunter2-secret",
      );
    } finally {
      await client.close();
    }
  });

  it("refuses writes to a read-only database as storage_unwritable and still answers reads", async () => {
    const admin = schemas.admin();
    const database = `readonly_${crypto.randomUUID().replaceAll("-", "")}`;
    await admin.run(`CREATE DATABASE ${database}`, []);
    const url = new URL(postgresUrl());
    url.pathname = `/${database}`;
    const writer = createPostgresSqlClient({ connectionString: url.toString(), maxConnections: 1 });
    const clock = createManualTime();
    let reader: PostgresSqlClient | undefined;
    try {
      await applyMigrations(writer);
      const held = await createSqlFencePort({ client: writer, clock }).acquire({
        scope: scope("session-ro"),
        ownerId: "owner-a",
        ttlMs: TTL,
      });
      if (held.type !== "acquired") throw new Error("expected acquired");
      await writer.close();
      await admin.run(`ALTER DATABASE ${database} SET default_transaction_read_only = on`, []);

      reader = createPostgresSqlClient({ connectionString: url.toString(), maxConnections: 1 });
      const fences = createSqlFencePort({ client: reader, clock });
      const unwritable = hasCode("storage_unwritable");
      await expect(
        fences.acquire({ scope: scope("session-new"), ownerId: "owner-a", ttlMs: TTL }),
      ).rejects.toSatisfy(unwritable);
      await expect(fences.renew({ fence: held.fence, ttlMs: TTL })).rejects.toSatisfy(unwritable);
      await expect(
        fences.publish({
          fence: held.fence,
          workspaceCandidate: { id: "w", contentHash: "sha256:aa" },
          outputCandidate: null,
        }),
      ).rejects.toSatisfy(unwritable);
      const queued = {
        scope: scope("session-ro"),
        generation: 1,
        ownerId: "owner-a",
        sandbox: lease,
      };
      await expect(
        createSqlOrphanPort({ client: reader, clock }).enqueue({
          ...queued,
          reason: "failed",
          error: "x",
        }),
      ).rejects.toSatisfy(unwritable);
      await expect(
        createSqlSandboxJournal({ client: reader, clock }).record(queued),
      ).rejects.toSatisfy(unwritable);
      await expect(
        reader.batch([{ sql: "DELETE FROM sandbox_journal", params: [] }]),
      ).rejects.toSatisfy(unwritable);
      // A refused write wrote nothing: busy, so a fence holder asks again until the database takes writes.
      await expect(fences.renew({ fence: held.fence, ttlMs: TTL })).rejects.toSatisfy(
        (error: unknown) => (error as ManagedRuntimeError).context.busy === true,
      );
      expect(await fences.isCurrent(held.fence)).toBe(true);
    } finally {
      await writer.close();
      await reader?.close();
      await admin.run(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`, []);
    }
  });

  it("cuts a statement at the statement timeout with timeout", async () => {
    const client = createPostgresSqlClient({
      connectionString: postgresUrl(),
      statementTimeoutMs: 50,
      maxConnections: 1,
    });
    try {
      await expect(client.all("SELECT pg_sleep(30)", [])).rejects.toSatisfy(hasCode("timeout"));
      // The connection stays usable after a cancelled statement.
      expect(await client.all("SELECT 1 AS one", [])).toEqual([{ one: 1 }]);
    } finally {
      await client.close();
    }
  });

  it("reports a refused login as unauthorized", async () => {
    const url = new URL(postgresUrl());
    url.username = "nobody_here";
    const client = createPostgresSqlClient({ connectionString: url.toString() });
    try {
      await expect(client.all("SELECT 1", [])).rejects.toSatisfy(hasCode("unauthorized"));
    } finally {
      await client.close();
    }
  });

  it("keeps a constraint violation internal and rolls its batch back", async () => {
    const client = await schemas.client();
    const columns =
      "id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox, reason, attempts, last_error, created_at, updated_at";
    const insert = {
      sql: `INSERT INTO runtime_orphans (${columns}) VALUES (?, 'w', 'e', 's', 'k', 1, 'o', '{}', 'r', 1, '', 0, 0)`,
      params: ["dup"],
    };
    await expect(client.batch([insert, insert])).rejects.toSatisfy(hasCode("internal"));
    expect(await client.all("SELECT id FROM runtime_orphans", [])).toEqual([]);
  });

  it("counts BIGINT columns as numbers", async () => {
    const client = await schemas.client();
    expect(await client.all("SELECT CAST(? AS BIGINT) AS n", [Date.UTC(2030, 0, 1)])).toEqual([
      { n: Date.UTC(2030, 0, 1) },
    ]);
  });

  it("fails after close with unavailable", async () => {
    const client = createPostgresSqlClient({ connectionString: postgresUrl() });
    await client.all("SELECT 1", []);
    await client.close();
    await expect(client.all("SELECT 1", [])).rejects.toSatisfy(hasCode("unavailable"));
  });

  it("refuses a connection string that is not a postgres URL as invalid_config, without echoing it", () => {
    let failure: unknown;
    try {
      createPostgresSqlClient({ connectionString: "mysql://user:hunter2-secret@db/x" });
    } catch (error) {
      failure = error;
    }
    expect(ManagedRuntimeError.hasCode(failure, "invalid_config")).toBe(true);
    expect(String((failure as Error).message)).toContain("connectionString");
    expect(JSON.stringify((failure as ManagedRuntimeError).toJSON())).not.toContain(
      "hunter2-secret",
    );
  });

  it.each([
    ["maxConnections", { maxConnections: 0 }],
    ["statementTimeoutMs", { statementTimeoutMs: -1 }],
    ["connectTimeoutMs", { connectTimeoutMs: 1.5 }],
    ["idleTimeoutMs", { idleTimeoutMs: "30s" }],
  ])("refuses a bad %s as invalid_config naming it", (field, bad) => {
    const create = () =>
      createPostgresSqlClient({ connectionString: "postgres://db/x", ...(bad as object) });
    expect(create).toThrowError(
      expect.objectContaining({ code: "invalid_config", message: expect.stringContaining(field) }),
    );
  });

  it("closes more than once without failing", async () => {
    const client = createPostgresSqlClient({ connectionString: postgresUrl() });
    await client.close();
    await client.close();
  });
});

describe("numberPlaceholders", () => {
  it.each([
    [
      "plain placeholders",
      "SELECT ? WHERE a = ? AND b = ?",
      3,
      "SELECT $1 WHERE a = $2 AND b = $3",
    ],
    ["a ? in a string literal", "SELECT '?', ? FROM t", 1, "SELECT '?', $1 FROM t"],
    ["a doubled quote before a ?", "SELECT 'it''s ?', ?", 1, "SELECT 'it''s ?', $1"],
    [
      "a ? in a quoted identifier",
      'SELECT "a?b" FROM t WHERE x = ?',
      1,
      'SELECT "a?b" FROM t WHERE x = $1',
    ],
    [
      "a ? in comments",
      "SELECT ? -- what?\n/* and ? */ , ?",
      2,
      "SELECT $1 -- what?\n/* and ? */ , $2",
    ],
    [
      "a ? in a dollar-quoted string",
      "SELECT $tag$ ? $tag$, ?, $$?$$",
      1,
      "SELECT $tag$ ? $tag$, $1, $$?$$",
    ],
  ])("rewrites %s", (_name, sql, count, expected) => {
    expect(numberPlaceholders(sql, count)).toBe(expected);
  });

  it("refuses a count that does not match as invalid_request", () => {
    expect(() => numberPlaceholders("SELECT ?, ?", 1)).toThrowError(
      expect.objectContaining({ code: "invalid_request" }),
    );
  });
});
