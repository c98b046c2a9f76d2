import {
  InternalError,
  type RuntimeOrphanPort,
  type RuntimeOrphanRecord,
  runtimeOrphanId,
} from "@open-managed-agents/runtime-resource-contract";
import { parseEnqueueInput } from "../stores/orphan-inputs.js";
import { queuedKeyValues } from "./sql-queued-rows.js";
import { type SqlStoreOptions, parseSqlStoreOptions } from "./sql-store-options.js";
import { ORPHAN_COLUMNS, type OrphanRow, readOrphanRow } from "./sql-orphan-rows.js";
import { createSqlRetryQueue } from "./sql-retry-queue.js";

/** Options of {@link createSqlOrphanPort}. */
export type SqlOrphanPortOptions = SqlStoreOptions;

const ENQUEUE = `INSERT INTO runtime_orphans
  (${ORPHAN_COLUMNS})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET
    attempts = runtime_orphans.attempts + 1, last_error = excluded.last_error, updated_at = excluded.updated_at
  RETURNING ${ORPHAN_COLUMNS}`;

/**
 * A {@link RuntimeOrphanPort} over a {@link SqlClient} (SQLite, Cloudflare D1). `enqueue` is one upsert,
 * so concurrent enqueues of one runtime count every attempt; `failed` increments in place.
 */
export function createSqlOrphanPort(options: SqlOrphanPortOptions): RuntimeOrphanPort {
  const { client, clock } = parseSqlStoreOptions(options, "SQL orphan port options");
  const queue = createSqlRetryQueue(
    client,
    clock,
    "runtime_orphans",
    ORPHAN_COLUMNS,
    readOrphanRow,
  );

  return {
    async enqueue(input): Promise<RuntimeOrphanRecord> {
      const request = parseEnqueueInput(input);
      const { scope } = request;
      const now = clock.now();
      const [row] = await client.all<OrphanRow>(ENQUEUE, [
        ...queuedKeyValues(runtimeOrphanId(scope, request.generation, request.sandbox), request),
        request.reason,
        request.error,
        now,
        now,
      ]);
      if (!row) throw new InternalError({ message: "orphan upsert returned no row" });
      return readOrphanRow(row);
    },

    list: queue.list,
    failed: queue.failed,
    resolve: queue.resolve,
  };
}
