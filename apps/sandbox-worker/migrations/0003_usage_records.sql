-- The usage ledger: one row per measured span a driver emitted (sandbox_active_seconds: a container's
-- start to its stop). value is whole seconds (at most 86400); times are epoch milliseconds; stopped_day is
-- the UTC day (YYYY-MM-DD) of stopped_at, the day a cost report attributes the row to. A repeated emit of
-- the same span is ignored by the primary key.
CREATE TABLE IF NOT EXISTS usage_records (
  provider TEXT NOT NULL,
  runtime_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  value INTEGER NOT NULL CHECK (value >= 0 AND value <= 86400),
  workspace_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  work_id TEXT NOT NULL,
  instance_type TEXT,
  started_at INTEGER NOT NULL,
  stopped_at INTEGER NOT NULL,
  stopped_day TEXT NOT NULL,
  PRIMARY KEY (provider, runtime_id, kind)
);
CREATE INDEX IF NOT EXISTS usage_records_by_stop ON usage_records (provider, kind, stopped_at);
