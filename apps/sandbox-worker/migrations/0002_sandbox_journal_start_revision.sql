-- The revision of the session's publication a journaled run's workspace was restored from, set when its
-- ama_worker harness starts and cleared when its own host settles the run: the reconciler salvages the
-- sandbox only while it is set and the session is still at it. Rows where it is NULL are only reaped.
ALTER TABLE sandbox_journal ADD COLUMN start_revision INTEGER;
