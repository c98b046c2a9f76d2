import { AbortedError } from "@open-managed-agents/runtime-resource-contract";

/** Source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** Waits. Rejects when the signal fires: with the signal's reason when it is an Error, else with `aborted`. */
export interface Scheduler {
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Timer-based scheduler. */
export const systemScheduler: Scheduler = {
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortedError(signal));
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortedError(signal));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

/** A clock and scheduler driven by hand: time moves only through {@link ManualTime.advance}. */
export interface ManualTime extends Clock, Scheduler {
  /** Moves time forward, waking every sleeper whose deadline passed, in deadline order. */
  advance(ms: number): Promise<void>;
  /** Number of pending sleepers. */
  pending(): number;
}

/** Creates a {@link ManualTime} starting at `startMs`. Used by tests, chaos schedules and benchmarks. */
export function createManualTime(startMs = Date.UTC(2026, 0, 1)): ManualTime {
  let now = startMs;
  let sequence = 0;
  const sleepers = new Map<number, { at: number; resolve: () => void }>();
  return {
    now: () => now,
    pending: () => sleepers.size,
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(abortedError(signal));
        const id = sequence++;
        const onAbort = () => {
          sleepers.delete(id);
          reject(abortedError(signal));
        };
        sleepers.set(id, {
          at: now + Math.max(0, ms),
          resolve: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
        });
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    async advance(ms) {
      const target = now + ms;
      for (;;) {
        const next = [...sleepers.entries()].filter(([, s]) => s.at <= target).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!next) break;
        now = Math.max(now, next[1].at);
        sleepers.delete(next[0]);
        next[1].resolve();
        // Let the woken continuation run before the next sleeper wakes.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      now = target;
    },
  };
}

// A signal aborted with an Error reason (a lost lease, a stopped timer) rejects with that reason, so
// cancelling a timer allocates nothing.
function abortedError(signal?: AbortSignal): unknown {
  return signal?.reason instanceof Error ? signal.reason : new AbortedError({ message: "operation aborted" });
}
