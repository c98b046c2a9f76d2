/**
 * Knows which sessions this process is running, so an item that met `conflict` (the session's fence is
 * still held by the previous turn) wakes as soon as that turn's run settles instead of waiting out the
 * whole backoff. A fence held elsewhere is waited out by the delay alone.
 */
export interface SessionGate {
  /** Marks a run of `sessionId` as started; the returned function marks it settled. */
  enter(sessionId: string): () => void;
  /** Resolves after `delayMs`, when a run of `sessionId` in this process settles, or when `signal` aborts. */
  waitForRelease(sessionId: string, delayMs: number, signal: AbortSignal): Promise<void>;
}

/** Creates an empty {@link SessionGate}. */
export function createSessionGate(): SessionGate {
  const waiters = new Map<string, Set<() => void>>();
  return {
    enter(sessionId) {
      let settled = false;
      return () => {
        if (settled) return;
        settled = true;
        const pending = waiters.get(sessionId);
        waiters.delete(sessionId);
        for (const wake of pending ?? []) wake();
      };
    },
    waitForRelease(sessionId, delayMs, signal) {
      return new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const set = waiters.get(sessionId) ?? new Set<() => void>();
        waiters.set(sessionId, set);
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          set.delete(done);
          resolve();
        };
        const timer = setTimeout(done, delayMs);
        signal.addEventListener("abort", done, { once: true });
        set.add(done);
      });
    },
  };
}

/** Delay before conflict retry `attempt` (1-based): the fence's remaining time, else exponential, capped. */
export function conflictDelayMs(
  attempt: number,
  expiresAt: string | null,
  policy: { baseDelayMs: number; maxDelayMs: number },
): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const untilExpiry = expiresAt === null ? Number.NaN : Date.parse(expiresAt) - Date.now();
  // An expiry sooner than the backoff is worth waiting for exactly (plus a little slack for clock skew).
  if (Number.isFinite(untilExpiry) && untilExpiry >= 0 && untilExpiry < exponential)
    return Math.max(untilExpiry + 50, policy.baseDelayMs);
  return exponential;
}
