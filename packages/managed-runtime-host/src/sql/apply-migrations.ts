import * as z from "zod";
import { nonEmptyString, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { clockSchema } from "../stores/store-options.js";
import { type Clock, systemClock } from "../time.js";
import {
  type SqlMigration,
  migrationsTableSql,
  runtimeResourceMigrations,
} from "./migration-sources.js";
import type { SqlClient, SqlStatement } from "./sql-client.js";
import { splitSqlStatements } from "./split-sql-statements.js";

/** Table that records which migrations {@link applyMigrations} applied. */
export const MIGRATIONS_TABLE = "runtime_resource_migrations";

/** Options of {@link applyMigrations}. */
export interface ApplyMigrationsOptions {
  /** Migrations to apply. @default the shipped migrations in the client's dialect */
  readonly migrations?: readonly SqlMigration[];
  /** Stamps `applied_at`. @default systemClock */
  readonly clock?: Clock;
}

const optionsSchema = z.object({
  migrations: z.array(z.object({ name: nonEmptyString, sql: nonEmptyString })).optional(),
  clock: clockSchema.optional(),
});

// Postgres: every migration batch first takes one transaction-scoped advisory lock, so hosts starting together
// apply migrations one at a time (concurrent `CREATE TABLE IF NOT EXISTS` can collide in Postgres' catalog).
// SQLite and D1 already run one writer at a time.
const MIGRATION_LOCK: readonly SqlStatement[] = [
  { sql: "SELECT pg_advisory_xact_lock(7249031542377166412)", params: [] },
];

/**
 * Applies every migration not yet recorded in {@link MIGRATIONS_TABLE}, in name order. Each migration
 * and its record are one batch, so a migration applies completely or not at all. The shipped statements
 * use `IF NOT EXISTS` where the dialect has it, and a batch that fails because another caller applied the
 * same migration meanwhile is skipped, so concurrent callers are safe. A database migrated with
 * `wrangler d1 migrations apply` keeps being migrated that way: `ALTER TABLE` statements cannot run twice.
 * Returns the names applied by this call.
 */
export async function applyMigrations(
  client: SqlClient,
  options: ApplyMigrationsOptions = {},
): Promise<string[]> {
  const parsed = parseRecord(optionsSchema, options, {
    record: "applyMigrations options",
    code: "invalid_config",
  });
  const clock = parsed.clock ?? systemClock;
  const dialect = client.dialect ?? "sqlite";
  const lock = dialect === "postgres" ? MIGRATION_LOCK : [];
  const migrations = [...(parsed.migrations ?? runtimeResourceMigrations(dialect))].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  await client.batch([...lock, { sql: migrationsTableSql(MIGRATIONS_TABLE, dialect), params: [] }]);
  const rows = await client.all<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`, []);
  const done = new Set(rows.map((row) => row.name));
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.name)) continue;
    const statements = splitSqlStatements(migration.sql).map((sql) => ({ sql, params: [] }));
    const record = {
      sql: `INSERT INTO ${MIGRATIONS_TABLE} (name, applied_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
      params: [migration.name, clock.now()],
    };
    let results;
    try {
      results = await client.batch([...lock, ...statements, record]);
    } catch (error) {
      // A statement without IF NOT EXISTS (ALTER TABLE ... ADD COLUMN) fails when another host applied the
      // same migration since our read; its record is there now, and that is no failure of ours.
      if (await isRecorded(client, migration.name)) continue;
      throw error;
    }
    // A host that applied it between our read and our batch recorded it first: it is not ours to report.
    if (results.at(-1)?.changes === 1) applied.push(migration.name);
  }
  return applied;
}

async function isRecorded(client: SqlClient, name: string): Promise<boolean> {
  const rows = await client
    .all(`SELECT name FROM ${MIGRATIONS_TABLE} WHERE name = ?`, [name])
    .catch(() => []);
  return rows.length === 1;
}
