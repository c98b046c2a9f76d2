import type { Pool, PoolClient } from "pg";
import * as z from "zod";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { loadPg } from "./pg-module.js";
import { postgresFailure } from "./postgres-failure.js";
import { numberPlaceholders } from "./postgres-placeholders.js";
import type { SqlClient, SqlRunResult, SqlStatement, SqlValue } from "./sql-client.js";

/** Options of {@link createPostgresSqlClient}. */
export interface PostgresSqlClientOptions {
  /**
   * `postgres://user:password@host:port/database?…`, as node-postgres reads it (`sslmode`, and `options` such as
   * `-c search_path=…`, included). It is handed to the driver only, never put in an error or a log.
   */
  readonly connectionString: string;
  /** Connections the pool keeps at most. @default 10 */
  readonly maxConnections?: number;
  /** Server-side `statement_timeout` of every connection; a statement cut by it fails with `timeout`. @default 10000 */
  readonly statementTimeoutMs?: number;
  /** How long opening a connection may take before the call fails with `unavailable`. @default 10000 */
  readonly connectTimeoutMs?: number;
  /** How long an idle connection stays open. @default 30000 */
  readonly idleTimeoutMs?: number;
  /** `application_name` the server shows for the connections. @default "open-managed-agents" */
  readonly applicationName?: string;
}

/** A {@link SqlClient} over a Postgres connection pool. */
export interface PostgresSqlClient extends SqlClient {
  readonly dialect: "postgres";
  /** Closes the pool's connections; later calls fail with `unavailable`. */
  close(): Promise<void>;
}

const milliseconds = z.number().int().positive().max(2_147_483_647);
const optionsSchema = z.object({
  connectionString: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL"),
  maxConnections: z.number().int().positive().max(10_000).optional(),
  statementTimeoutMs: milliseconds.optional(),
  connectTimeoutMs: milliseconds.optional(),
  idleTimeoutMs: milliseconds.optional(),
  applicationName: z.string().min(1).max(63).optional(),
});

// Postgres BIGINT (type OID 20) arrives as text; the stores' BIGINT columns hold epoch milliseconds and
// counters, well inside Number.MAX_SAFE_INTEGER.
const INT8_OID = 20;
const parseInt8 = (value: string): number => Number(value);

/**
 * A {@link SqlClient} over Postgres through node-postgres (`pg`, an optional peer dependency, imported on the
 * first call). Calls share one pool; `batch` runs on one connection between `BEGIN` and `COMMIT`, and rolls
 * back on any failure. `?` placeholders become `$1`, `$2`, … (statements without bound values, such as
 * migrations, are sent as written). Failures are typed: `unavailable` (the server cannot be reached, is shutting
 * down or restarting), `storage_unwritable` (a read-only transaction, database or standby, a full disk, no
 * privilege), `timeout` (the statement timeout), `unauthorized` (login refused), otherwise `internal`.
 */
export function createPostgresSqlClient(options: PostgresSqlClientOptions): PostgresSqlClient {
  const parsed = parseRecord(optionsSchema, options, {
    record: "Postgres SQL client options",
    code: "invalid_config",
  });
  const statementTimeoutMs = parsed.statementTimeoutMs ?? 10_000;
  let pool: Promise<Pool> | undefined;
  let closed = false;

  const poolOf = (): Promise<Pool> => {
    if (closed)
      return Promise.reject(
        postgresFailure(new Error("Cannot use a pool after calling end on the pool")),
      );
    pool ??= loadPg().then((pg) => {
      const created = new pg.Pool({
        connectionString: parsed.connectionString,
        max: parsed.maxConnections ?? 10,
        connectionTimeoutMillis: parsed.connectTimeoutMs ?? 10_000,
        idleTimeoutMillis: parsed.idleTimeoutMs ?? 30_000,
        statement_timeout: statementTimeoutMs,
        // A batch whose caller vanished mid-transaction must not hold its row locks for long.
        idle_in_transaction_session_timeout: statementTimeoutMs,
        application_name: parsed.applicationName ?? "open-managed-agents",
        types: {
          getTypeParser: ((oid: number, format?: "text" | "binary") =>
            oid === INT8_OID
              ? parseInt8
              : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
        },
      });
      // An idle connection that the server drops (a restart, a terminated backend) is reported here; the pool
      // discards it and the next call opens a new one, so the event needs no action beyond being handled.
      created.on("error", () => undefined);
      return created;
    });
    return pool;
  };

  const text = (sql: string, params: readonly SqlValue[]): string =>
    params.length === 0 ? sql : numberPlaceholders(sql, params.length);

  const query = async <T>(
    sql: string,
    params: readonly SqlValue[],
  ): Promise<{ rows: T[]; rowCount: number | null }> => {
    try {
      const result = await (await poolOf()).query({ text: text(sql, params), values: [...params] });
      return { rows: result.rows as T[], rowCount: result.rowCount };
    } catch (error) {
      throw postgresFailure(error);
    }
  };

  const runIn = async (connection: PoolClient, statement: SqlStatement): Promise<SqlRunResult> => {
    const { sql, params } = statement;
    const result = await connection.query({ text: text(sql, params), values: [...params] });
    return { changes: result.rowCount ?? 0 };
  };

  return {
    dialect: "postgres",

    async all<T>(sql: string, params: readonly SqlValue[]): Promise<T[]> {
      return (await query<T>(sql, params)).rows;
    },

    async run(sql, params) {
      return { changes: (await query(sql, params)).rowCount ?? 0 };
    },

    async batch(statements) {
      if (statements.length === 0) return [];
      let connection: PoolClient;
      try {
        connection = await (await poolOf()).connect();
      } catch (error) {
        throw postgresFailure(error);
      }
      let failure: unknown;
      try {
        await connection.query("BEGIN");
        const results: SqlRunResult[] = [];
        for (const statement of statements) results.push(await runIn(connection, statement));
        await connection.query("COMMIT");
        return results;
      } catch (error) {
        failure = error;
        await connection.query("ROLLBACK").catch(() => undefined);
        throw postgresFailure(error);
      } finally {
        // After a server error the rolled-back connection is sound; after any other failure it is destroyed.
        connection.release(failure !== undefined && !isServerError(failure));
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      const current = pool;
      pool = undefined;
      if (current) await (await current.catch(() => undefined))?.end();
    },
  };
}

/** True for an error message the server sent (it carries a severity), which leaves the connection usable. */
function isServerError(error: unknown): boolean {
  return typeof (error as { severity?: unknown } | null)?.severity === "string";
}
