import { InternalError, type SandboxJournalPort, type SandboxJournalRecord, sandboxJournalId } from "@open-managed-agents/runtime-resource-contract";
import { parseJournalRecordInput } from "../stores/journal-inputs.js";
import { parseFailedInput, parseListInput, parseResolveInput } from "../stores/orphan-inputs.js";
import { type SqlStoreOptions, parseSqlStoreOptions } from "./sql-store-options.js";
import { JOURNAL_COLUMNS, type JournalRow, readJournalRow } from "./sql-journal-rows.js";

/** Options of {@link createSqlSandboxJournal}. */
export type SqlSandboxJournalOptions = SqlStoreOptions;

// A second record of the same id keeps the first row; the no-op update makes RETURNING answer either way.
const RECORD = `INSERT INTO sandbox_journal
  (id, workspace_id, environment_id, session_id, work_id, generation, owner_id, sandbox, attempts, last_error, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?)
  ON CONFLICT (id) DO UPDATE SET id = sandbox_journal.id
  RETURNING ${JOURNAL_COLUMNS}`;
// rowid breaks ties between records written in the same millisecond, in insertion order.
const LIST = `SELECT ${JOURNAL_COLUMNS} FROM sandbox_journal ORDER BY created_at, rowid LIMIT ?`;
const FAILED = "UPDATE sandbox_journal SET attempts = attempts + 1, last_error = ?, updated_at = ? WHERE id = ?";
const RESOLVE = "DELETE FROM sandbox_journal WHERE id = ?";

/**
 * A {@link SandboxJournalPort} over a {@link SqlClient} (SQLite, Cloudflare D1), in the `sandbox_journal`
 * table of migration `0002_sandbox_journal`. Every call is one statement.
 */
export function createSqlSandboxJournal(options: SqlSandboxJournalOptions): SandboxJournalPort {
  const { client, clock } = parseSqlStoreOptions(options, "SQL sandbox journal options");

  return {
    async record(input): Promise<SandboxJournalRecord> {
      const request = parseJournalRecordInput(input);
      const { scope } = request;
      const now = clock.now();
      const [row] = await client.all<JournalRow>(RECORD, [
        sandboxJournalId(scope, request.generation, request.sandbox),
        scope.workspaceId,
        scope.environmentId,
        scope.sessionId,
        scope.workId,
        request.generation,
        request.ownerId,
        JSON.stringify(request.sandbox),
        now,
        now,
      ]);
      if (!row) throw new InternalError({ message: "sandbox journal insert returned no row" });
      return readJournalRow(row);
    },

    async list(input): Promise<readonly SandboxJournalRecord[]> {
      const { limit } = parseListInput(input);
      return (await client.all<JournalRow>(LIST, [limit])).map(readJournalRow);
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
