import type { ManualTime, Scheduler } from "../../src/time.js";

/** Every sleep a scheduler was asked for, with whether its signal had already fired. */
export interface SleepRecord {
  readonly ms: number;
  readonly alreadyAborted: boolean;
}

/** Manual time that records each sleep call before delegating. */
export function recordingScheduler(
  time: ManualTime,
): Scheduler & { readonly sleeps: SleepRecord[] } {
  const sleeps: SleepRecord[] = [];
  return {
    sleeps,
    sleep(ms, signal) {
      sleeps.push({ ms, alreadyAborted: signal?.aborted ?? false });
      return time.sleep(ms, signal);
    },
  };
}

/**
 * Manual time whose sleeps of exactly `failMs`, from the `from`-th such call on, fail with `error` (a
 * broken timer backend): as a rejected promise, or thrown synchronously from `sleep` itself.
 */
export function throwingScheduler(
  time: ManualTime,
  failMs: number,
  error: Error,
  options: { readonly how?: "reject" | "throw"; readonly from?: number } = {},
): Scheduler {
  let calls = 0;
  return {
    sleep(ms, signal) {
      if (ms !== failMs || ++calls < (options.from ?? 1)) return time.sleep(ms, signal);
      const how = options.how ?? "reject";
      if (how === "throw") throw error;
      return Promise.reject(error);
    },
  };
}

/**
 * Manual time whose abort handling only listens for a future abort: a sleep on a signal that already
 * fired is never woken (the listener comes too late), so it never settles.
 */
export function futureAbortOnlyScheduler(time: ManualTime): Scheduler & { stuck(): number } {
  let stuck = 0;
  return {
    stuck: () => stuck,
    sleep(ms, signal) {
      if (!signal?.aborted) return time.sleep(ms, signal);
      stuck += 1;
      return new Promise<void>(() => undefined);
    },
  };
}

/** Manual time that ignores the signal: every sleep resolves on time, even after an abort (a late timer). */
export function signalBlindScheduler(time: ManualTime): Scheduler {
  return { sleep: (ms) => time.sleep(ms) };
}
