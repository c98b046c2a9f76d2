import { withDeadline as deadline } from "@open-managed-agents/runtime-utils";
import type { Scheduler } from "./time.js";

export { TIMER_CANCELLED, abortReason, raceAbort } from "@open-managed-agents/runtime-utils";

/**
 * Settles with `call()`, or rejects with a `timeout` error naming `operation` after `ms` on `scheduler`,
 * or with the reason of `parent` when it fires, whichever comes first.
 */
export function withDeadline<T>(
  scheduler: Scheduler,
  ms: number,
  operation: string,
  call: () => Promise<T>,
  parent?: AbortSignal,
): Promise<T> {
  return deadline(call, {
    ms,
    operation,
    sleep: (wait, signal) => scheduler.sleep(wait, signal),
    ...(parent ? { signal: parent } : {}),
  });
}
