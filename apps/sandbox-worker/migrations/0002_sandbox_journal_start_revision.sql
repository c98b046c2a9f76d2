-- The revision of the session's publication each journaled run started from: the reconciler salvages an
-- abandoned sandbox's workspace only while the session is still at it. NULL for rows written before this
-- column existed; those sandboxes are only reaped.
ALTER TABLE sandbox_journal ADD COLUMN start_revision INTEGER;
