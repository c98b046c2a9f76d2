import {
  type SandboxJournalPort,
  type SandboxJournalRecord,
  sandboxJournalId,
} from "@open-managed-agents/runtime-resource-contract";
import {
  parseJournalRecordInput,
  parseListSessionInput,
  parseStartRevisionInput,
  sameSession,
} from "./journal-inputs.js";
import { memoryRetryQueue } from "./memory-retry-queue.js";
import { type StoreClockOptions, isoTime, parseStoreClockOptions } from "./store-options.js";

/** Options of {@link createMemorySandboxJournal}. */
export type MemorySandboxJournalOptions = StoreClockOptions;

/**
 * An in-process {@link SandboxJournalPort}, in first-record order (the oldest-first order `list`
 * promises). It dies with the process, so it protects against failed provider calls, not host crashes:
 * use the SQL journal where a host may be killed.
 */
export function createMemorySandboxJournal(
  options: MemorySandboxJournalOptions = {},
): SandboxJournalPort {
  const { clock } = parseStoreClockOptions(options, "memory sandbox journal options");
  const records = new Map<string, SandboxJournalRecord>();
  const queue = memoryRetryQueue(records, clock);

  return {
    async record(input): Promise<SandboxJournalRecord> {
      const request = parseJournalRecordInput(input);
      const id = sandboxJournalId(request.scope, request.generation, request.sandbox);
      const existing = records.get(id);
      if (existing) return structuredClone(existing);
      const now = isoTime(clock.now());
      const record: SandboxJournalRecord = {
        id,
        ...request,
        startRevision: null,
        attempts: 0,
        lastError: "",
        createdAt: now,
        updatedAt: now,
      };
      records.set(id, record);
      return structuredClone(record);
    },

    async setStartRevision(input): Promise<void> {
      const { id, startRevision } = parseStartRevisionInput(input);
      const existing = records.get(id);
      if (existing) records.set(id, { ...existing, startRevision });
    },

    async listSession(input): Promise<readonly SandboxJournalRecord[]> {
      const { scope, limit } = parseListSessionInput(input);
      return [...records.values()]
        .filter((record) => sameSession(record.scope, scope))
        .slice(0, limit)
        .map((record) => structuredClone(record));
    },

    ...queue,
  };
}
