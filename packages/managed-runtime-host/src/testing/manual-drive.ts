import type { ManualTime } from "../time.js";

/** Options of {@link settleWithManualTime}. */
export interface SettleOptions {
  /** Time advanced per step. @default 100 */
  readonly stepMs?: number;
  /** Steps before giving up with an error. @default 100000 */
  readonly maxSteps?: number;
  /** Called before each step with the step number; may change the world (abort, inject faults). */
  readonly onStep?: (step: number) => void | Promise<void>;
}

/**
 * Advances manual time in steps until `promise` settles, and returns its value. Throws when it is still
 * pending after `maxSteps`, so a hung run fails the test instead of stalling it.
 */
export async function settleWithManualTime<T>(
  promise: Promise<T>,
  time: ManualTime,
  options: SettleOptions = {},
): Promise<T> {
  const stepMs = options.stepMs ?? 100;
  const maxSteps = options.maxSteps ?? 100_000;
  let settled = false;
  const observed = promise.finally(() => {
    settled = true;
  });
  observed.catch(() => undefined);
  for (let step = 0; !settled; step += 1) {
    if (step >= maxSteps) throw new Error(`still pending after ${maxSteps} steps of ${stepMs} ms`);
    await options.onStep?.(step);
    await time.advance(stepMs);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return promise;
}
