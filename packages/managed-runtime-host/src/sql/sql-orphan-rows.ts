import { IntegrityError, type RuntimeOrphanRecord, parseRuntimeOrphanRecord } from "@open-managed-agents/runtime-resource-contract";
import { isoTime } from "../stores/store-options.js";

/** Columns every orphan query selects. */
export const ORPHAN_COLUMNS =
  "id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox, reason, attempts, last_error, created_at, updated_at";

/** A `runtime_orphans` row. */
export interface OrphanRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly environment_id: string;
  readonly session_id: string;
  readonly work_id: string;
  readonly generation: number;
  readonly owner_id: string;
  /** JSON of the sandbox lease. */
  readonly sandbox: string;
  readonly reason: string;
  readonly attempts: number;
  readonly last_error: string;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Rebuilds an orphan record from its row, parsing it with the contract schema. */
export function readOrphanRow(row: OrphanRow): RuntimeOrphanRecord {
  const sandbox = parseStoredLease(row.sandbox, "orphan record");
  return parseRuntimeOrphanRecord(
    {
      id: row.id,
      scope: { workspaceId: row.workspace_id, environmentId: row.environment_id, sessionId: row.session_id, workId: row.work_id },
      generation: row.generation,
      ownerId: row.owner_id,
      sandbox,
      reason: row.reason,
      attempts: row.attempts,
      lastError: row.last_error,
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
    },
    { code: "integrity_failed" },
  );
}

/** The JSON of a stored lease; a row that is not JSON is `integrity_failed` naming its record. */
export function parseStoredLease(json: string, record: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new IntegrityError({ message: `stored ${record} lease is not valid JSON`, context: { record }, cause: error });
  }
}
