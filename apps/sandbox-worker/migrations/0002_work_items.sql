-- Work items this Worker started, and how each ended. Times are epoch milliseconds.
-- status: queued | running | completed | failed | lease_lost | conflict.
-- result holds the outcome as JSON (revision and generation, or an error code and message). Profiles are
-- not stored here: their process env may carry secrets.
CREATE TABLE IF NOT EXISTS work_items (
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  status TEXT NOT NULL,
  runtime_id TEXT,
  result TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, work_id)
);
