import type { UsageLedgerReader } from "@open-managed-agents/cost-attribution";
import { createD1SqlClient } from "@open-managed-agents/managed-runtime-host";
import {
  type UsageRecorderPort,
  parseRecord,
  usageRecordSchema,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

const INSERT = `INSERT INTO usage_records
  (provider, runtime_id, kind, value, workspace_id, environment_id, session_id, work_id, instance_type, started_at, stopped_at, stopped_day)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (provider, runtime_id, kind) DO NOTHING`;
const TOTALS = `SELECT stopped_day AS day, workspace_id, environment_id, session_id, instance_type, SUM(value) AS seconds
  FROM usage_records
  WHERE provider = ? AND kind = ? AND stopped_at >= ? AND stopped_at < ?
  GROUP BY stopped_day, workspace_id, environment_id, session_id, instance_type`;

const totalRowSchema = z.object({
  day: z.string(),
  workspace_id: z.string(),
  environment_id: z.string(),
  session_id: z.string(),
  instance_type: z.string().nullable(),
  seconds: z.number(),
});

/** The usage ledger on D1 (migrations/0003_usage_records.sql): the driver's recorder and the cost report's reader. */
export function createD1UsageLedger(database: D1Database): UsageRecorderPort & UsageLedgerReader {
  const client = createD1SqlClient(database);
  return {
    async record(input) {
      const record = parseRecord(usageRecordSchema, input, { record: "usage record" });
      const stoppedAt = Date.parse(record.stoppedAt);
      const { scope } = record;
      await client.run(INSERT, [
        record.provider,
        record.runtimeId,
        record.kind,
        record.value,
        scope.workspaceId,
        scope.environmentId,
        scope.sessionId,
        scope.workId,
        record.instanceType,
        Date.parse(record.startedAt),
        stoppedAt,
        new Date(stoppedAt).toISOString().slice(0, 10),
      ]);
    },
    async totals({ kind, provider, fromInclusive, toExclusive }) {
      const rows = await client.all(TOTALS, [
        provider,
        kind,
        Date.parse(fromInclusive),
        Date.parse(toExclusive),
      ]);
      return rows.map((row) => {
        const parsed = parseRecord(totalRowSchema, row, {
          record: "usage total row",
          code: "internal",
        });
        return {
          day: parsed.day,
          workspaceId: parsed.workspace_id,
          environmentId: parsed.environment_id,
          sessionId: parsed.session_id,
          instanceType: parsed.instance_type,
          seconds: parsed.seconds,
        };
      });
    },
  };
}
