import { abortReason } from "./abort-reason.js";

/** A sleep function: waits `ms`, rejecting when `signal` fires. Schedulers and {@link withDeadline} take one. */
export type SleepFunction = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Waits `ms` on a timer. Rejects with {@link abortReason} when `signal` fires (at once when it already
 * has), and clears the timer, so an aborted sleep holds nothing.
 */
export const abortableSleep: SleepFunction = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
