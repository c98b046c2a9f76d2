/**
 * The SQL migrations of the fence, orphan and sandbox journal stores, embedded so `applyMigrations` needs no file
 * access. Each text equals the file of the same name under `migrations/`, which D1 users apply with
 * `wrangler d1 migrations apply`; a test keeps the two identical.
 */

/** One migration: a sortable name and its SQL text. */
export interface SqlMigration {
  /** File name without `.sql`; migrations apply in name order. */
  readonly name: string;
  /** Statements separated by `;`, split as SQLite tokenizes them (see `splitSqlStatements`). */
  readonly sql: string;
}

/** The migrations this package ships, oldest first. */
export const RUNTIME_RESOURCE_MIGRATIONS: readonly SqlMigration[] = [
  {
    name: "0001_runtime_resources",
    sql: `-- Fences and publications of managed-runtime sessions, and the orphaned-runtime queue.
-- Written in the dialect SQLite and Cloudflare D1 share. Times are epoch milliseconds.

-- One row per session. generation only grows, across owners, releases and expiries. The holder
-- columns are NULL while nobody holds the fence. The fence token itself is never stored: only its
-- SHA-256, so a copy of the table cannot be used to publish.
CREATE TABLE IF NOT EXISTS runtime_resource_fences (
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  generation INTEGER NOT NULL DEFAULT 0,
  work_id TEXT,
  owner_id TEXT,
  token_sha256 TEXT,
  expires_at INTEGER NOT NULL DEFAULT 0,
  published_generation INTEGER NOT NULL DEFAULT 0,
  revision INTEGER NOT NULL DEFAULT 0,
  publication TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, environment_id, session_id)
);

-- Runtimes whose terminate failed, waiting to be reaped. No fence token or credential is kept.
CREATE TABLE IF NOT EXISTS runtime_orphans (
  id TEXT NOT NULL PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  owner_id TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  reason TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS runtime_orphans_by_age ON runtime_orphans (created_at);
`,
  },
  {
    name: "0002_sandbox_journal",
    sql: `-- Write-ahead journal of sandboxes: a row is written before a driver starts compute and deleted only once
-- its termination is confirmed. No fence token or credential is kept. Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS sandbox_journal (
  id TEXT NOT NULL PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  owner_id TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS sandbox_journal_by_age ON sandbox_journal (created_at);
`,
  },
];
