import { type RuntimeOrphanPort, type RuntimeOrphanRecord, runtimeOrphanId } from "@open-managed-agents/runtime-resource-contract";
import { parseEnqueueInput, parseFailedInput, parseListInput, parseResolveInput } from "./orphan-inputs.js";
import { type StoreClockOptions, isoTime, parseStoreClockOptions } from "./store-options.js";

/** Options of {@link createMemoryOrphanPort}. */
export type MemoryOrphanPortOptions = StoreClockOptions;

/**
 * An in-process {@link RuntimeOrphanPort}. Records are kept in first-enqueue order, which is the
 * oldest-first order `list` promises. Records returned to callers are copies.
 */
export function createMemoryOrphanPort(options: MemoryOrphanPortOptions = {}): RuntimeOrphanPort {
  const { clock } = parseStoreClockOptions(options, "memory orphan port options");
  const records = new Map<string, RuntimeOrphanRecord>();

  return {
    async enqueue(input): Promise<RuntimeOrphanRecord> {
      const request = parseEnqueueInput(input);
      const id = runtimeOrphanId(request.scope, request.generation, request.sandbox);
      const now = isoTime(clock.now());
      const existing = records.get(id);
      const record: RuntimeOrphanRecord = existing
        ? { ...existing, attempts: existing.attempts + 1, lastError: request.error, updatedAt: now }
        : {
            id,
            scope: request.scope,
            generation: request.generation,
            ownerId: request.ownerId,
            sandbox: request.sandbox,
            reason: request.reason,
            attempts: 1,
            lastError: request.error,
            createdAt: now,
            updatedAt: now,
          };
      records.set(id, record);
      return structuredClone(record);
    },

    async list(input): Promise<readonly RuntimeOrphanRecord[]> {
      const { limit } = parseListInput(input);
      return [...records.values()].slice(0, limit).map((record) => structuredClone(record));
    },

    async failed(input): Promise<void> {
      const { id, error } = parseFailedInput(input);
      const existing = records.get(id);
      // A record resolved by a concurrent reconciler stays resolved.
      if (!existing) return;
      records.set(id, { ...existing, attempts: existing.attempts + 1, lastError: error, updatedAt: isoTime(clock.now()) });
    },

    async resolve(input): Promise<void> {
      records.delete(parseResolveInput(input).id);
    },
  };
}
