import { parseFailedInput, parseListInput, parseResolveInput } from "../stores/orphan-inputs.js";
import type { Clock } from "../time.js";
import type { SqlClient } from "./sql-client.js";

/** The calls the orphan and journal tables answer alike: oldest-first listing, a failed attempt, resolution. */
export interface SqlRetryQueue<Record> {
  list(input: { readonly limit?: number }): Promise<readonly Record[]>;
  failed(input: { readonly id: string; readonly error: string }): Promise<void>;
  resolve(input: { readonly id: string }): Promise<void>;
}

/** One statement per call over `table` (a constant of ours, never input), rows read with `readRow`. */
export function createSqlRetryQueue<Row, Record>(
  client: SqlClient,
  clock: Clock,
  table: "runtime_orphans" | "sandbox_journal",
  columns: string,
  readRow: (row: Row) => Record,
): SqlRetryQueue<Record> {
  // rowid breaks ties between records written in the same millisecond, in insertion order.
  const list = `SELECT ${columns} FROM ${table} ORDER BY created_at, rowid LIMIT ?`;
  const failed = `UPDATE ${table} SET attempts = attempts + 1, last_error = ?, updated_at = ? WHERE id = ?`;
  const resolve = `DELETE FROM ${table} WHERE id = ?`;
  return {
    async list(input) {
      const { limit } = parseListInput(input);
      return (await client.all<Row>(list, [limit])).map(readRow);
    },
    async failed(input) {
      const { id, error } = parseFailedInput(input);
      await client.run(failed, [error, clock.now(), id]);
    },
    async resolve(input) {
      await client.run(resolve, [parseResolveInput(input).id]);
    },
  };
}
