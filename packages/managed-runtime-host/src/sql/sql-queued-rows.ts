import {
  IntegrityError,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { isoTime } from "../stores/store-options.js";

/** The columns the orphan and journal tables share, in table order (each table adds its own after `sandbox`). */
export const QUEUED_KEY_COLUMNS =
  "id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox";
/** The bookkeeping columns both tables end with. */
export const QUEUED_TAIL_COLUMNS = "attempts, last_error, created_at, updated_at";

/** The columns of a `runtime_orphans` or `sandbox_journal` row both tables have. */
export interface QueuedRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly environment_id: string;
  readonly session_id: string;
  readonly work_id: string;
  readonly generation: number;
  readonly owner_id: string;
  /** JSON of the sandbox lease (or lease-to-be). */
  readonly sandbox: string;
  readonly attempts: number;
  readonly last_error: string;
  readonly created_at: number;
  readonly updated_at: number;
}

/** What an insert of either table binds for {@link QUEUED_KEY_COLUMNS}. */
export interface QueuedInsert {
  readonly scope: RuntimeResourceScope;
  readonly generation: number;
  readonly ownerId: string;
  readonly sandbox: unknown;
}

/** The bound values of {@link QUEUED_KEY_COLUMNS}, in order. */
export function queuedKeyValues(
  id: string,
  request: QueuedInsert,
): [string, string, string, string, string, number, string, string] {
  const { scope } = request;
  return [
    id,
    scope.workspaceId,
    scope.environmentId,
    scope.sessionId,
    scope.workId,
    request.generation,
    request.ownerId,
    JSON.stringify(request.sandbox),
  ];
}

/** The record fields of the shared columns, before the contract schema parses the whole record. */
export function readQueuedFields(row: QueuedRow, record: string) {
  return {
    id: row.id,
    scope: {
      workspaceId: row.workspace_id,
      environmentId: row.environment_id,
      sessionId: row.session_id,
      workId: row.work_id,
    },
    generation: row.generation,
    ownerId: row.owner_id,
    sandbox: parseStoredLease(row.sandbox, record),
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** The JSON of a stored lease; a row that is not JSON is `integrity_failed` naming its record. */
function parseStoredLease(json: string, record: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new IntegrityError({
      message: `stored ${record} lease is not valid JSON`,
      context: { record },
      cause: error,
    });
  }
}
