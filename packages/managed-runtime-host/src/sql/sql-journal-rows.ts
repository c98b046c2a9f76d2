import { type SandboxJournalRecord, parseSandboxJournalRecord } from "@open-managed-agents/runtime-resource-contract";
import { QUEUED_KEY_COLUMNS, QUEUED_TAIL_COLUMNS, type QueuedRow, readQueuedFields } from "./sql-queued-rows.js";

/** Columns every journal query selects. */
export const JOURNAL_COLUMNS = `${QUEUED_KEY_COLUMNS}, ${QUEUED_TAIL_COLUMNS}`;

/** A `sandbox_journal` row. */
export type JournalRow = QueuedRow;

/** Rebuilds a journal record from its row, parsing it with the contract schema. */
export function readJournalRow(row: JournalRow): SandboxJournalRecord {
  return parseSandboxJournalRecord(readQueuedFields(row, "sandbox journal record"), { code: "integrity_failed" });
}
