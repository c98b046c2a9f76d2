-- Write-ahead journal of sandboxes: a row is written before a driver starts compute and deleted only once
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
