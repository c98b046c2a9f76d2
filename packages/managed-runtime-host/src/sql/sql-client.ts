/** A value bound to a `?` placeholder. Integers stay within `Number.MAX_SAFE_INTEGER`. */
export type SqlValue = string | number | null;

/** One parameterised statement. */
export interface SqlStatement {
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

/** What a write reports. */
export interface SqlRunResult {
  /** Rows inserted, updated or deleted. */
  readonly changes: number;
}

/**
 * The small SQL surface the stores need, written in the dialect SQLite and Cloudflare D1 share. Every
 * value is bound through `?` placeholders; SQL text never embeds data.
 */
export interface SqlClient {
  /** Runs a statement that returns rows (`SELECT`, or a write with `RETURNING`). */
  all<T>(sql: string, params: readonly SqlValue[]): Promise<T[]>;
  /** Runs a write and reports how many rows it changed. */
  run(sql: string, params: readonly SqlValue[]): Promise<SqlRunResult>;
  /** Runs the statements in order as one transaction: all of them apply, or none. */
  batch(statements: readonly SqlStatement[]): Promise<SqlRunResult[]>;
}
