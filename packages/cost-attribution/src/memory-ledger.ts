import {
  type UsageRecord,
  type UsageRecorderPort,
  parseRecord,
  usageRecordSchema,
} from "@open-managed-agents/runtime-resource-contract";
import type { UsageLedgerReader, UsageLedgerTotal } from "./ports.js";

/** A usage ledger in memory: the recorder a driver writes to and the reader a report reads from. */
export interface MemoryUsageLedger extends UsageRecorderPort, UsageLedgerReader {
  /** Every record taken, in order. */
  readonly records: readonly UsageRecord[];
}

/** Creates a {@link MemoryUsageLedger}, for tests and single-process deployments. Records are validated on write. */
export function createMemoryUsageLedger(): MemoryUsageLedger {
  const records: UsageRecord[] = [];
  return {
    records,
    async record(record) {
      records.push(parseRecord(usageRecordSchema, record, { record: "usage record" }));
    },
    async totals({ kind, provider, fromInclusive, toExclusive }) {
      const from = Date.parse(fromInclusive);
      const to = Date.parse(toExclusive);
      const groups = new Map<string, UsageLedgerTotal>();
      for (const record of records) {
        const stopped = Date.parse(record.stoppedAt);
        if (record.kind !== kind || record.provider !== provider || stopped < from || stopped >= to)
          continue;
        const day = new Date(stopped).toISOString().slice(0, 10);
        const { workspaceId, environmentId, sessionId } = record.scope;
        const key = JSON.stringify([
          day,
          workspaceId,
          environmentId,
          sessionId,
          record.instanceType,
        ]);
        const seconds = (groups.get(key)?.seconds ?? 0) + record.value;
        groups.set(key, {
          day,
          workspaceId,
          environmentId,
          sessionId,
          instanceType: record.instanceType,
          seconds,
        });
      }
      return [...groups.values()];
    },
  };
}
