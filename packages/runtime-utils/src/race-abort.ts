import { abortReason } from "./abort-reason.js";

/**
 * Settles with `promise`, or rejects with `reason(signal)` ({@link abortReason} unless given) as soon
 * as `signal` fires, whichever comes first. A callee that ignores its signal can therefore never hold
 * the caller: it stops waiting. The losing promise's later rejection is swallowed.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  reason: (signal: AbortSignal) => unknown = abortReason,
): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(reason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason(signal));
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
