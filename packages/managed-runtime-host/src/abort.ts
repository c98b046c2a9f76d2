import { AbortedError, TimeoutError } from "@open-managed-agents/runtime-resource-contract";
import type { Scheduler } from "./time.js";

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
 * Runs `call` with a signal that fires after `ms` on `scheduler` (or when `parent` fires), and stops
 * waiting at that moment with a `timeout` error naming `operation`.
 */
export async function withDeadline<T>(
  scheduler: Scheduler,
  ms: number,
  operation: string,
  call: (signal: AbortSignal) => Promise<T>,
  parent?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  parent?.addEventListener("abort", onParentAbort, { once: true });
  const timerStop = new AbortController();
  scheduler.sleep(ms, timerStop.signal).then(
    () => controller.abort(new TimeoutError({ message: `${operation} did not finish within ${ms} ms`, context: { operation, timeoutMs: ms } })),
    () => undefined,
  );
  try {
    return await raceAbort(Promise.resolve().then(() => call(controller.signal)), controller.signal);
  } finally {
    timerStop.abort();
    parent?.removeEventListener("abort", onParentAbort);
  }
}

/** The error a fired signal carries, or a generic `aborted` error. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new AbortedError({ message: "operation aborted" });
}
