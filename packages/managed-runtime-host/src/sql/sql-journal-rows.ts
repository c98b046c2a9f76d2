import {
  type SandboxJournalRecord,
  parseSandboxJournalRecord,
} from "@open-managed-agents/runtime-resource-contract";
import {
  QUEUED_KEY_COLUMNS,
  QUEUED_TAIL_COLUMNS,
  type QueuedRow,
  readQueuedFields,
} from "./sql-queued-rows.js";

/** Columns every journal query selects (`start_revision` came with migration 0002_sandbox_journal_start_revision). */
export const JOURNAL_COLUMNS = `${QUEUED_KEY_COLUMNS}, ${QUEUED_TAIL_COLUMNS}, start_revision`;

/** A `sandbox_journal` row. */
export interface JournalRow extends QueuedRow {
  /** NULL for a row written before the column existed. */
  readonly start_revision: number | null;
}

/** Rebuilds a journal record from its row, parsing it with the contract schema. */
export function readJournalRow(row: JournalRow): SandboxJournalRecord {
  const fields = {
    ...readQueuedFields(row, "sandbox journal record"),
    startRevision: row.start_revision,
  };
  return parseSandboxJournalRecord(fields, { code: "integrity_failed" });
}
