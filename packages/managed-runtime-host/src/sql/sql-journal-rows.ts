import { type SandboxJournalRecord, parseSandboxJournalRecord } from "@open-managed-agents/runtime-resource-contract";
import { parseStoredLease } from "./sql-orphan-rows.js";
import { isoTime } from "../stores/store-options.js";

/** Columns every journal query selects. */
export const JOURNAL_COLUMNS =
  "id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox, attempts, last_error, created_at, updated_at";

/** A `sandbox_journal` row. */
export interface JournalRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly environment_id: string;
  readonly session_id: string;
  readonly work_id: string;
  readonly generation: number;
  readonly owner_id: string;
  /** JSON of the lease-to-be. */
  readonly sandbox: string;
  readonly attempts: number;
  readonly last_error: string;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Rebuilds a journal record from its row, parsing it with the contract schema. */
export function readJournalRow(row: JournalRow): SandboxJournalRecord {
  const sandbox = parseStoredLease(row.sandbox, "sandbox journal record");
  return parseSandboxJournalRecord(
    {
      id: row.id,
      scope: { workspaceId: row.workspace_id, environmentId: row.environment_id, sessionId: row.session_id, workId: row.work_id },
      generation: row.generation,
      ownerId: row.owner_id,
      sandbox,
      attempts: row.attempts,
      lastError: row.last_error,
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
    },
    { code: "integrity_failed" },
  );
}
