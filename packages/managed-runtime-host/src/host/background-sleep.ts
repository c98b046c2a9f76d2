import type { RunContext } from "./run-context.js";

/**
 * One wait of a background loop (monitor, session-input sync). Resolves `true` when the loop may go
 * on. It never calls the scheduler on a signal that already fired (a scheduler that only listens for a
 * future abort would never wake, and cleanup waits for the loop), and it reports `false` when the
 * signal fired during the wait, even if the sleep resolved anyway (a late timer must not renew a fence
 * the caller gave up). A sleep that fails for any other reason loses the lease as `scheduler_failed`,
 * naming the cause: a loop that can no longer wait can no longer renew.
 */
export async function backgroundSleep(
  run: RunContext,
  ms: number,
  signal: AbortSignal,
  stage: string,
): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await run.options.scheduler.sleep(ms, signal);
  } catch (error) {
    if (!signal.aborted) run.loseLease("scheduler_failed", { stage, cause: error });
    return false;
  }
  return !signal.aborted;
}
