import type { SqlClient, SqlRunResult } from "./sql-client.js";
import { sqlFailure } from "./sql-failure.js";

/** What a D1 statement reports; only `changes` is read. */
export interface D1ResultLike {
  readonly results?: unknown[];
  readonly meta: { readonly changes?: number };
}

/** The part of a D1 prepared statement the client uses. */
export interface D1PreparedStatementLike {
  bind(...values: unknown[]): D1PreparedStatementLike;
  all(): Promise<D1ResultLike>;
  run(): Promise<D1ResultLike>;
}

/** The part of a Cloudflare `D1Database` binding the client uses. */
export interface D1DatabaseLike {
  prepare(query: string): D1PreparedStatementLike;
  batch(statements: D1PreparedStatementLike[]): Promise<D1ResultLike[]>;
}

/**
 * A {@link SqlClient} over a Cloudflare D1 binding. D1 runs each statement on the database's single
 * writer, and runs a `batch` as one transaction that rolls back entirely when any statement fails.
 */
export function createD1SqlClient(d1: D1DatabaseLike): SqlClient {
  const changes = (result: D1ResultLike): SqlRunResult => ({ changes: result.meta.changes ?? 0 });
  return {
    async all<T>(sql: string, params: readonly unknown[]): Promise<T[]> {
      try {
        const result = await d1
          .prepare(sql)
          .bind(...params)
          .all();
        return (result.results ?? []) as T[];
      } catch (error) {
        throw sqlFailure(error);
      }
    },
    async run(sql, params) {
      try {
        return changes(
          await d1
            .prepare(sql)
            .bind(...params)
            .run(),
        );
      } catch (error) {
        throw sqlFailure(error);
      }
    },
    async batch(statements) {
      if (statements.length === 0) return [];
      try {
        const results = await d1.batch(
          statements.map((statement) => d1.prepare(statement.sql).bind(...statement.params)),
        );
        return results.map(changes);
      } catch (error) {
        throw sqlFailure(error);
      }
    },
  };
}
