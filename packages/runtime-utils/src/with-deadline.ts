import { TimeoutError } from "@open-managed-agents/runtime-resource-contract";
import { type SleepFunction, abortableSleep } from "./abortable-sleep.js";
import { raceAbort } from "./race-abort.js";

/** The reason a finished call cancels its deadline timer with; shared, so cancelling allocates nothing. */
export const TIMER_CANCELLED: Error = new Error("deadline timer cancelled");

/** Options of {@link withDeadline}. */
export interface DeadlineOptions {
  /** How long the work may take, in ms. */
  readonly ms: number;
  /** Names the work in the default `timeout` error's message and context. */
  readonly operation?: string;
  /** A caller's signal: when it fires first, the result is its {@link abortReason}. */
  readonly signal?: AbortSignal;
  /** The timer to wait on; a scheduler's `sleep` makes the deadline follow manual time. @default abortableSleep */
  readonly sleep?: SleepFunction;
  /** The error the deadline rejects with. @default a `TimeoutError` naming `operation` and `timeoutMs` */
  readonly timeoutError?: () => unknown;
  /** The error a fired `signal` rejects with. @default abortReason(signal) */
  readonly abortError?: (signal: AbortSignal) => unknown;
}

/**
 * Settles with `work` (a promise, or a function started at once), or rejects with the timeout error
 * after `ms`, or with the reason of `signal` when it fires, whichever comes first. The timer is
 * cleared either way, and a late rejection of `work` is swallowed.
 */
export async function withDeadline<T>(
  work: Promise<T> | (() => Promise<T>),
  options: DeadlineOptions,
): Promise<T> {
  const { ms, operation } = options;
  const timer = new AbortController();
  const deadline = (options.sleep ?? abortableSleep)(ms, timer.signal).then(() => {
    throw options.timeoutError
      ? options.timeoutError()
      : new TimeoutError({
          message: `${operation ?? "the operation"} did not finish within ${ms} ms`,
          context: operation === undefined ? { timeoutMs: ms } : { operation, timeoutMs: ms },
        });
  });
  deadline.catch(() => undefined);
  const running = typeof work === "function" ? Promise.resolve().then(work) : work;
  running.catch(() => undefined);
  try {
    const first = Promise.race([running, deadline]);
    return await (options.signal ? raceAbort(first, options.signal, options.abortError) : first);
  } finally {
    timer.abort(TIMER_CANCELLED);
  }
}
