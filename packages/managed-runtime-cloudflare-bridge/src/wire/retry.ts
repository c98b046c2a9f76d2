import { AbortedError, jitteredBackoffMs } from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";

/** Backoff policy for idempotent bridge calls. */
export interface RetryPolicy {
  /** Total attempts including the first. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
};

/** Full-jitter exponential delay for attempt `n` (0-based), by the contract's one backoff rule. */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return jitteredBackoffMs({
    attempt,
    baseMs: policy.baseDelayMs,
    maxMs: policy.maxDelayMs,
    jitter: 1,
    random,
  });
}

/** Sleeps `ms`, rejecting with `aborted` when the signal fires. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return abortableSleep(ms, signal).catch((reason: unknown) => {
    throw new AbortedError({ message: "bridge call aborted", cause: reason });
  });
}
