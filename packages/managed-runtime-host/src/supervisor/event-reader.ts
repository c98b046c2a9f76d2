import type { HarnessSupervisorEvent } from "@open-managed-agents/runtime-resource-contract";
import { abortReason } from "../abort.js";
import type { Scheduler } from "../time.js";

/** What one wait for a supervisor event produced. */
export type NextEvent = HarnessSupervisorEvent | "timeout" | "end";

/** Reads supervisor events one at a time, each wait bounded by a timeout on the scheduler. */
export interface EventReader {
  /** The next event, `timeout` after `timeoutMs`, or `end`. Rejects with `aborted` when `signal` fires. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<NextEvent>;
}

/**
 * Wraps an event stream so waits can time out without losing an event: a read that outlives its
 * timeout stays pending and is picked up by the next call.
 */
export function createEventReader(
  events: AsyncIterable<HarnessSupervisorEvent>,
  scheduler: Scheduler,
): EventReader {
  const iterator = events[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<HarnessSupervisorEvent>> | null = null;
  return {
    async next(timeoutMs, signal) {
      // An already-fired signal would never reach the listener below.
      if (signal?.aborted) throw abortReason(signal);
      pending ??= iterator.next();
      const read = pending;
      const timer = new AbortController();
      const onAbort = () => timer.abort();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const outcome = await Promise.race([
          read.then((result) => ({ kind: "read" as const, result })),
          scheduler.sleep(Math.max(0, timeoutMs), timer.signal).then(
            () => ({ kind: "timeout" as const }),
            (error: unknown) => {
              if (signal?.aborted) throw error;
              return { kind: "stopped" as const };
            },
          ),
        ]);
        if (outcome.kind !== "read") return "timeout";
        pending = null;
        return outcome.result.done ? "end" : outcome.result.value;
      } finally {
        signal?.removeEventListener("abort", onAbort);
        timer.abort();
      }
    },
  };
}
