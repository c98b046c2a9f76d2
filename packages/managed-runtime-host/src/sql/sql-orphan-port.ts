import { InternalError, type RuntimeOrphanPort, type RuntimeOrphanRecord, runtimeOrphanId } from "@open-managed-agents/runtime-resource-contract";
import { parseEnqueueInput, parseFailedInput, parseListInput, parseResolveInput } from "../stores/orphan-inputs.js";
import { type SqlStoreOptions, parseSqlStoreOptions } from "./sql-store-options.js";
import { ORPHAN_COLUMNS, type OrphanRow, readOrphanRow } from "./sql-orphan-rows.js";

/** Options of {@link createSqlOrphanPort}. */
export type SqlOrphanPortOptions = SqlStoreOptions;

const ENQUEUE = `INSERT INTO runtime_orphans
  (id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox, reason, attempts, last_error, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET
    attempts = runtime_orphans.attempts + 1, last_error = excluded.last_error, updated_at = excluded.updated_at
  RETURNING ${ORPHAN_COLUMNS}`;
// rowid breaks ties between records written in the same millisecond, in insertion order.
const LIST = `SELECT ${ORPHAN_COLUMNS} FROM runtime_orphans ORDER BY created_at, rowid LIMIT ?`;
const FAILED = "UPDATE runtime_orphans SET attempts = attempts + 1, last_error = ?, updated_at = ? WHERE id = ?";
const RESOLVE = "DELETE FROM runtime_orphans WHERE id = ?";

/**
 * A {@link RuntimeOrphanPort} over a {@link SqlClient} (SQLite, Cloudflare D1). `enqueue` is one upsert,
 * so concurrent enqueues of one runtime count every attempt; `failed` increments in place.
 */
export function createSqlOrphanPort(options: SqlOrphanPortOptions): RuntimeOrphanPort {
  const { client, clock } = parseSqlStoreOptions(options, "SQL orphan port options");

  return {
    async enqueue(input): Promise<RuntimeOrphanRecord> {
      const request = parseEnqueueInput(input);
      const { scope } = request;
      const now = clock.now();
      const [row] = await client.all<OrphanRow>(ENQUEUE, [
        runtimeOrphanId(scope, request.generation, request.sandbox),
        scope.workspaceId,
        scope.environmentId,
        scope.sessionId,
        scope.workId,
        request.generation,
        request.ownerId,
        JSON.stringify(request.sandbox),
        request.reason,
        request.error,
        now,
        now,
      ]);
      if (!row) throw new InternalError({ message: "orphan upsert returned no row" });
      return readOrphanRow(row);
    },

    async list(input): Promise<readonly RuntimeOrphanRecord[]> {
      const { limit } = parseListInput(input);
      const rows = await client.all<OrphanRow>(LIST, [limit]);
      return rows.map(readOrphanRow);
    },

    async failed(input): Promise<void> {
      const { id, error } = parseFailedInput(input);
      await client.run(FAILED, [error, clock.now(), id]);
    },

    async resolve(input): Promise<void> {
      await client.run(RESOLVE, [parseResolveInput(input).id]);
    },
  };
}
