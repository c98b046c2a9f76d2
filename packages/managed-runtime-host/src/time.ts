import { abortReason, abortableSleep } from "@open-managed-agents/runtime-utils";

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
export const systemScheduler: Scheduler = { sleep: abortableSleep };

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
        if (signal?.aborted) return reject(abortReason(signal));
        const id = sequence++;
        const onAbort = () => {
          sleepers.delete(id);
          reject(abortReason(signal as AbortSignal));
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
        const next = [...sleepers.entries()]
          .filter(([, s]) => s.at <= target)
          .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
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
