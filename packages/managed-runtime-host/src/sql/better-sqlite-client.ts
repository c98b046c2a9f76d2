import type { SqlClient, SqlRunResult, SqlStatement, SqlValue } from "./sql-client.js";
import { sqlFailure } from "./sql-failure.js";

/** The part of a better-sqlite3 prepared statement the client uses. */
export interface BetterSqliteStatementLike {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { readonly changes: number | bigint };
}

/** The part of a better-sqlite3 `Database` the client uses; the module itself is never imported. */
export interface BetterSqliteDatabaseLike {
  prepare(sql: string): BetterSqliteStatementLike;
  exec(sql: string): unknown;
  readonly inTransaction: boolean;
}

/**
 * A {@link SqlClient} over a better-sqlite3 database. better-sqlite3 is synchronous, so each call runs to
 * completion before any other JavaScript runs; `batch` wraps its statements in `BEGIN IMMEDIATE` …
 * `COMMIT`, which also holds the write lock against other processes sharing the file.
 */
export function createBetterSqliteClient(db: BetterSqliteDatabaseLike): SqlClient {
  const statements = new Map<string, BetterSqliteStatementLike>();
  const prepare = (sql: string): BetterSqliteStatementLike => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const runOne = (statement: SqlStatement): SqlRunResult => ({
    changes: Number(prepare(statement.sql).run(...statement.params).changes),
  });

  return {
    async all<T>(sql: string, params: readonly SqlValue[]): Promise<T[]> {
      try {
        return prepare(sql).all(...params) as T[];
      } catch (error) {
        throw sqlFailure(error);
      }
    },
    async run(sql, params) {
      try {
        return runOne({ sql, params });
      } catch (error) {
        throw sqlFailure(error);
      }
    },
    async batch(batch) {
      try {
        db.exec("BEGIN IMMEDIATE");
        try {
          const results = batch.map(runOne);
          db.exec("COMMIT");
          return results;
        } catch (error) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw error;
        }
      } catch (error) {
        throw sqlFailure(error);
      }
    },
  };
}
