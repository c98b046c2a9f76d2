import type { Clock } from "../time.js";
import { parseFailedInput, parseListInput, parseResolveInput } from "./orphan-inputs.js";
import { isoTime } from "./store-options.js";

/** A record the memory orphan port and journal keep alike. */
interface RetryRecord {
  readonly attempts: number;
  readonly lastError: string;
  readonly updatedAt: string;
}

/** `list` (insertion order, copies), `failed` and `resolve` over one map of records. */
export function memoryRetryQueue<Record extends RetryRecord>(
  records: Map<string, Record>,
  clock: Clock,
) {
  return {
    async list(input: unknown): Promise<readonly Record[]> {
      const { limit } = parseListInput(input);
      return [...records.values()].slice(0, limit).map((record) => structuredClone(record));
    },
    async failed(input: unknown): Promise<void> {
      const { id, error } = parseFailedInput(input);
      const existing = records.get(id);
      // A record resolved concurrently stays resolved.
      if (!existing) return;
      records.set(id, {
        ...existing,
        attempts: existing.attempts + 1,
        lastError: error,
        updatedAt: isoTime(clock.now()),
      });
    },
    async resolve(input: unknown): Promise<void> {
      records.delete(parseResolveInput(input).id);
    },
  };
}
