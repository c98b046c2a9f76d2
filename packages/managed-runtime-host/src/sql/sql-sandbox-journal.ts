import {
  InternalError,
  type SandboxJournalPort,
  type SandboxJournalRecord,
  sandboxJournalId,
} from "@open-managed-agents/runtime-resource-contract";
import {
  parseJournalRecordInput,
  parseListSessionInput,
  parseStartRevisionInput,
} from "../stores/journal-inputs.js";
import { queuedKeyValues } from "./sql-queued-rows.js";
import { type SqlStoreOptions, parseSqlStoreOptions } from "./sql-store-options.js";
import { JOURNAL_COLUMNS, type JournalRow, readJournalRow } from "./sql-journal-rows.js";
import { createSqlRetryQueue } from "./sql-retry-queue.js";

/** Options of {@link createSqlSandboxJournal}. */
export type SqlSandboxJournalOptions = SqlStoreOptions;

// A second record of the same id keeps the first row; the no-op update makes RETURNING answer either way.
const RECORD = `INSERT INTO sandbox_journal
  (${JOURNAL_COLUMNS})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, NULL)
  ON CONFLICT (id) DO UPDATE SET id = sandbox_journal.id
  RETURNING ${JOURNAL_COLUMNS}`;

// rowid breaks ties between records written in the same millisecond, as in the oldest-first list.
const LIST_SESSION = `SELECT ${JOURNAL_COLUMNS} FROM sandbox_journal
  WHERE workspace_id = ? AND environment_id = ? AND session_id = ?
  ORDER BY created_at, rowid LIMIT ?`;

const SET_START_REVISION = "UPDATE sandbox_journal SET start_revision = ? WHERE id = ?";

/**
 * A {@link SandboxJournalPort} over a {@link SqlClient} (SQLite, Cloudflare D1), in the `sandbox_journal`
 * table of migrations `0002_sandbox_journal` and `0002_sandbox_journal_start_revision`. Every call is one statement.
 */
export function createSqlSandboxJournal(options: SqlSandboxJournalOptions): SandboxJournalPort {
  const { client, clock } = parseSqlStoreOptions(options, "SQL sandbox journal options");
  const queue = createSqlRetryQueue(
    client,
    clock,
    "sandbox_journal",
    JOURNAL_COLUMNS,
    readJournalRow,
  );

  return {
    async record(input): Promise<SandboxJournalRecord> {
      const request = parseJournalRecordInput(input);
      const { scope } = request;
      const now = clock.now();
      const [row] = await client.all<JournalRow>(RECORD, [
        ...queuedKeyValues(sandboxJournalId(scope, request.generation, request.sandbox), request),
        now,
        now,
      ]);
      if (!row) throw new InternalError({ message: "sandbox journal insert returned no row" });
      return readJournalRow(row);
    },

    async setStartRevision(input): Promise<void> {
      const { id, startRevision } = parseStartRevisionInput(input);
      await client.run(SET_START_REVISION, [startRevision, id]);
    },

    async listSession(input): Promise<readonly SandboxJournalRecord[]> {
      const { scope, limit } = parseListSessionInput(input);
      const values = [scope.workspaceId, scope.environmentId, scope.sessionId, limit];
      return (await client.all<JournalRow>(LIST_SESSION, values)).map(readJournalRow);
    },

    list: queue.list,
    failed: queue.failed,
    resolve: queue.resolve,
  };
}
