import { type SandboxJournalPort, type SandboxJournalRecord, sandboxJournalId } from "@open-managed-agents/runtime-resource-contract";
import { parseJournalRecordInput } from "./journal-inputs.js";
import { parseFailedInput, parseListInput, parseResolveInput } from "./orphan-inputs.js";
import { type StoreClockOptions, isoTime, parseStoreClockOptions } from "./store-options.js";

/** Options of {@link createMemorySandboxJournal}. */
export type MemorySandboxJournalOptions = StoreClockOptions;

/**
 * An in-process {@link SandboxJournalPort}, in first-record order (the oldest-first order `list`
 * promises). It dies with the process, so it protects against failed provider calls, not host crashes:
 * use the SQL journal where a host may be killed.
 */
export function createMemorySandboxJournal(options: MemorySandboxJournalOptions = {}): SandboxJournalPort {
  const { clock } = parseStoreClockOptions(options, "memory sandbox journal options");
  const records = new Map<string, SandboxJournalRecord>();

  return {
    async record(input): Promise<SandboxJournalRecord> {
      const request = parseJournalRecordInput(input);
      const id = sandboxJournalId(request.scope, request.generation, request.sandbox);
      const existing = records.get(id);
      if (existing) return structuredClone(existing);
      const now = isoTime(clock.now());
      const record: SandboxJournalRecord = { id, ...request, attempts: 0, lastError: "", createdAt: now, updatedAt: now };
      records.set(id, record);
      return structuredClone(record);
    },

    async list(input): Promise<readonly SandboxJournalRecord[]> {
      const { limit } = parseListInput(input);
      return [...records.values()].slice(0, limit).map((record) => structuredClone(record));
    },

    async failed(input): Promise<void> {
      const { id, error } = parseFailedInput(input);
      const existing = records.get(id);
      // A record resolved concurrently stays resolved.
      if (!existing) return;
      records.set(id, { ...existing, attempts: existing.attempts + 1, lastError: error, updatedAt: isoTime(clock.now()) });
    },

    async resolve(input): Promise<void> {
      records.delete(parseResolveInput(input).id);
    },
  };
}
