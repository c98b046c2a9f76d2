/**
 * The one source of the fence, orphan and sandbox journal schema, in every dialect the SQL stores speak.
 * Each migration is written once, with the few words the dialects disagree on taken from a {@link SqlDialect}
 * entry. The `.sql` files under `migrations/` (SQLite and D1, applied by `wrangler d1 migrations apply`) and
 * `migrations/postgres/` are generated from these texts when the package builds, never edited.
 */
import type { SqlDialect } from "./sql-client.js";

/** One migration: a sortable name and its SQL text. */
export interface SqlMigration {
  /** File name without `.sql`; migrations apply in name order. */
  readonly name: string;
  /** Statements separated by `;`, split as SQLite tokenizes them (see `splitSqlStatements`). */
  readonly sql: string;
}

/** The words a migration's text takes from its dialect. */
interface DialectWords {
  /** Which engines read the text. */
  readonly engines: string;
  /** An integer column wide enough for epoch milliseconds. */
  readonly integer: string;
  /**
   * Column lines that give the queue tables a `rowid` growing in insertion order, which breaks ties between
   * rows written in the same millisecond: SQLite has one implicitly, Postgres declares it as an identity column.
   */
  readonly rowid: string;
}

const WORDS: Readonly<Record<SqlDialect, DialectWords>> = {
  sqlite: { engines: "the dialect SQLite and Cloudflare D1 share", integer: "INTEGER", rowid: "" },
  postgres: {
    engines: "Postgres' dialect",
    integer: "BIGINT",
    rowid: "  rowid BIGINT GENERATED ALWAYS AS IDENTITY,\n",
  },
};

const SOURCES: readonly {
  readonly name: string;
  readonly text: (words: DialectWords) => string;
}[] = [
  {
    name: "0001_runtime_resources",
    text: ({
      engines,
      integer,
      rowid,
    }) => `-- Fences and publications of managed-runtime sessions, and the orphaned-runtime queue.
-- Written in ${engines}. Times are epoch milliseconds.

-- One row per session. generation only grows, across owners, releases and expiries. The holder
-- columns are NULL while nobody holds the fence. The fence token itself is never stored: only its
-- SHA-256, so a copy of the table cannot be used to publish.
CREATE TABLE IF NOT EXISTS runtime_resource_fences (
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  generation ${integer} NOT NULL DEFAULT 0,
  work_id TEXT,
  owner_id TEXT,
  token_sha256 TEXT,
  expires_at ${integer} NOT NULL DEFAULT 0,
  published_generation ${integer} NOT NULL DEFAULT 0,
  revision ${integer} NOT NULL DEFAULT 0,
  publication TEXT,
  updated_at ${integer} NOT NULL,
  PRIMARY KEY (workspace_id, environment_id, session_id)
);

-- Runtimes whose terminate failed, waiting to be reaped. No fence token or credential is kept.
CREATE TABLE IF NOT EXISTS runtime_orphans (
${rowid}  id TEXT NOT NULL PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  generation ${integer} NOT NULL,
  owner_id TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  reason TEXT NOT NULL,
  attempts ${integer} NOT NULL,
  last_error TEXT NOT NULL,
  created_at ${integer} NOT NULL,
  updated_at ${integer} NOT NULL
);

CREATE INDEX IF NOT EXISTS runtime_orphans_by_age ON runtime_orphans (created_at);
`,
  },
  {
    name: "0002_sandbox_journal",
    text: ({
      integer,
      rowid,
    }) => `-- Write-ahead journal of sandboxes: a row is written before a driver starts compute and deleted only once
-- its termination is confirmed. No fence token or credential is kept. Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS sandbox_journal (
${rowid}  id TEXT NOT NULL PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  generation ${integer} NOT NULL,
  owner_id TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  attempts ${integer} NOT NULL,
  last_error TEXT NOT NULL,
  created_at ${integer} NOT NULL,
  updated_at ${integer} NOT NULL
);

CREATE INDEX IF NOT EXISTS sandbox_journal_by_age ON sandbox_journal (created_at);
`,
  },
  {
    // Named to sort right after 0002_sandbox_journal and before an application's own 0002_* and later files,
    // so a D1 migrations folder holding the host's files first and then its own keeps that order.
    name: "0002_sandbox_journal_start_revision",
    text: ({
      integer,
    }) => `-- The revision of the session's publication a journaled run's workspace was restored from, set when its
-- ama_worker harness starts and cleared when its own host settles the run: the reconciler salvages the
-- sandbox only while it is set and the session is still at it. Rows where it is NULL are only reaped.
ALTER TABLE sandbox_journal ADD COLUMN start_revision ${integer};
`,
  },
];

/** The table that records applied migrations, in `dialect`. */
export function migrationsTableSql(table: string, dialect: SqlDialect): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (name TEXT NOT NULL PRIMARY KEY, applied_at ${WORDS[dialect].integer} NOT NULL)`;
}

/** The shipped migrations in `dialect`, oldest first. */
export function runtimeResourceMigrations(dialect: SqlDialect): readonly SqlMigration[] {
  const words = WORDS[dialect];
  return SOURCES.map((source) => ({ name: source.name, sql: source.text(words) }));
}

/** The migrations this package ships for SQLite and Cloudflare D1, oldest first (`migrations/*.sql`). */
export const RUNTIME_RESOURCE_MIGRATIONS: readonly SqlMigration[] =
  runtimeResourceMigrations("sqlite");

/** The same migrations in Postgres' dialect, oldest first (`migrations/postgres/*.sql`). */
export const POSTGRES_RUNTIME_RESOURCE_MIGRATIONS: readonly SqlMigration[] =
  runtimeResourceMigrations("postgres");
