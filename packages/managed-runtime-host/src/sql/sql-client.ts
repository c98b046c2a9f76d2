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

/** The SQL dialect a client's database speaks: `sqlite` (SQLite, Cloudflare D1) or `postgres`. */
export type SqlDialect = "sqlite" | "postgres";

/**
 * The small SQL surface the stores need. The stores' statements are written in what SQLite, Cloudflare D1
 * and Postgres share; every value is bound through `?` placeholders, and SQL text never embeds data.
 */
export interface SqlClient {
  /** The database's dialect, which picks the migrations `applyMigrations` applies. @default "sqlite" */
  readonly dialect?: SqlDialect;
  /** Runs a statement that returns rows (`SELECT`, or a write with `RETURNING`). */
  all<T>(sql: string, params: readonly SqlValue[]): Promise<T[]>;
  /** Runs a write and reports how many rows it changed. */
  run(sql: string, params: readonly SqlValue[]): Promise<SqlRunResult>;
  /** Runs the statements in order as one transaction: all of them apply, or none. */
  batch(statements: readonly SqlStatement[]): Promise<SqlRunResult[]>;
}
