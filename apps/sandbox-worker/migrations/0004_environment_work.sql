-- Work items claimed from the Managed Agents self-hosted environment, one row per work id, and how the
-- latest claim of each ended. Times are epoch milliseconds.
-- status: running | completed | failed | lease_lost | conflict | skipped | rejected | deferred | interrupted.
-- Neither the work secret nor the sessions token is stored: result holds only the outcome (revision and
-- generation, or an error code and message).
CREATE TABLE IF NOT EXISTS environment_work (
  work_id TEXT NOT NULL PRIMARY KEY,
  session_id TEXT,
  status TEXT NOT NULL,
  claims INTEGER NOT NULL,
  runtime_id TEXT,
  result TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
