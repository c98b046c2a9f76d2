import {
  type RuntimeOrphanPort,
  type RuntimeOrphanRecord,
  runtimeOrphanId,
} from "@open-managed-agents/runtime-resource-contract";
import { parseEnqueueInput } from "./orphan-inputs.js";
import { memoryRetryQueue } from "./memory-retry-queue.js";
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
  const queue = memoryRetryQueue(records, clock);

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

    ...queue,
  };
}
