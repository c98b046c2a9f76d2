import { AbortedError, TimeoutError } from "@open-managed-agents/runtime-resource-contract";
import type { Scheduler } from "./time.js";

/** The reason a finished call cancels its deadline timer with; shared, so cancelling allocates nothing. */
export const TIMER_CANCELLED: Error = new Error("deadline timer cancelled");

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as `signal` fires, whichever
 * comes first. A port that ignores its signal can therefore never hold a run: the host stops waiting.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Settles with `call()`, or rejects with a `timeout` error naming `operation` after `ms` on `scheduler`,
 * or with the reason of `parent` when it fires, whichever comes first.
 */
export async function withDeadline<T>(scheduler: Scheduler, ms: number, operation: string, call: () => Promise<T>, parent?: AbortSignal): Promise<T> {
  const timer = new AbortController();
  const deadline = scheduler.sleep(ms, timer.signal).then(() => {
    throw new TimeoutError({ message: `${operation} did not finish within ${ms} ms`, context: { operation, timeoutMs: ms } });
  });
  deadline.catch(() => undefined);
  try {
    const first = Promise.race([Promise.resolve().then(call), deadline]);
    return await (parent ? raceAbort(first, parent) : first);
  } finally {
    timer.abort(TIMER_CANCELLED);
  }
}

/** The error a fired signal carries, or a generic `aborted` error. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new AbortedError({ message: "operation aborted" });
}
