import * as z from "zod";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { type StoreClockOptions, clockSchema, hasMethods } from "../stores/store-options.js";
import { type Clock, systemClock } from "../time.js";
import type { SqlClient } from "./sql-client.js";

/** Options every SQL store factory accepts. */
export interface SqlStoreOptions extends StoreClockOptions {
  /** Database holding the tables of `migrations/` (see `applyMigrations`). */
  readonly client: SqlClient;
}

const sqlStoreOptionsSchema = z.object({
  client: z.custom<SqlClient>(
    (value) => hasMethods(value, ["all", "run", "batch"]),
    "must be a SqlClient with all, run and batch",
  ),
  clock: clockSchema.optional(),
});

/** Validates SQL store options once, at factory time; failure is `invalid_config` naming the field. */
export function parseSqlStoreOptions(
  options: unknown,
  record: string,
): { readonly client: SqlClient; readonly clock: Clock } {
  const parsed = parseRecord(sqlStoreOptionsSchema, options, { record, code: "invalid_config" });
  return { client: parsed.client, clock: parsed.clock ?? systemClock };
}
