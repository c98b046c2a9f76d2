import {
  type RuntimeOrphanRecord,
  parseRuntimeOrphanRecord,
} from "@open-managed-agents/runtime-resource-contract";
import {
  QUEUED_KEY_COLUMNS,
  QUEUED_TAIL_COLUMNS,
  type QueuedRow,
  readQueuedFields,
} from "./sql-queued-rows.js";

/** Columns every orphan query selects. */
export const ORPHAN_COLUMNS = `${QUEUED_KEY_COLUMNS}, reason, ${QUEUED_TAIL_COLUMNS}`;

/** A `runtime_orphans` row. */
export interface OrphanRow extends QueuedRow {
  readonly reason: string;
}

/** Rebuilds an orphan record from its row, parsing it with the contract schema. */
export function readOrphanRow(row: OrphanRow): RuntimeOrphanRecord {
  return parseRuntimeOrphanRecord(
    { ...readQueuedFields(row, "orphan record"), reason: row.reason },
    { code: "integrity_failed" },
  );
}
