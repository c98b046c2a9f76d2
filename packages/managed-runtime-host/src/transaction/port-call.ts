import type { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { raceAbort, withDeadline } from "../abort.js";
import { stageError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";

/** `${workId}:${generation}:${stage}`: the idempotency key of one stage of one generation. */
export function idempotencyKey(run: RunContext, stage: string): string {
  return `${run.scope.workId}:${run.requireFence().generation}:${stage}`;
}

/**
 * Calls a port during the transaction. The call receives the run's signal and the host stops waiting
 * the moment it fires, even if the port ignores it. A port method without a signal in its contract is
 * also bounded by `callTimeoutMs` (`unsignalled`). A failure becomes a typed, redacted error naming
 * `stage`; once the run has an outcome (lease lost, failure elsewhere) that outcome's error is thrown. A run
 * whose fence expired by the host's clock loses its lease (`fence_expired`) instead of calling.
 */
export async function callPort<T>(
  run: RunContext,
  stage: string,
  call: (signal: AbortSignal) => Promise<T>,
  options: { readonly unsignalled?: boolean } = {},
): Promise<T> {
  if (run.outcome) throw run.outcome.error;
  // Past its expiry on this host's clock (the process was stopped, say), the fence may be another run's and
  // the sandbox reaped: a call could reach a reaped sandbox, which some providers answer by starting compute.
  const fence = run.fence;
  if (fence && run.options.clock.now() >= Date.parse(fence.expiresAt))
    throw run.loseLease("fence_expired", { stage });
  run.inFlight.add(stage);
  try {
    if (options.unsignalled)
      return await withDeadline(
        run.options.scheduler,
        run.options.callTimeoutMs,
        stage,
        () => call(run.signal),
        run.signal,
      );
    return await raceAbort(
      Promise.resolve().then(() => call(run.signal)),
      run.signal,
    );
  } catch (error) {
    throw outcomeError(run) ?? stageError(error, stage, run.secrets());
  } finally {
    run.inFlight.delete(stage);
  }
}

/** The error of the run's outcome, once it has one. A function, so narrowing before an await does not stick. */
export function outcomeError(run: RunContext): ManagedRuntimeError | null {
  return run.outcome?.error ?? null;
}

/** Result of a call that must not throw. */
export type Settled<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: ManagedRuntimeError };

/**
 * Calls a port method that takes no signal with a deadline of `ms` on the host scheduler, outside the
 * transaction's signal (cleanup, monitor), stopping early when `parent` fires. Never throws: a failure
 * or timeout comes back as a typed, redacted error naming `stage`.
 */
export async function callWithDeadline<T>(
  run: RunContext,
  stage: string,
  ms: number,
  call: () => Promise<T>,
  parent?: AbortSignal,
): Promise<Settled<T>> {
  try {
    return { ok: true, value: await withDeadline(run.options.scheduler, ms, stage, call, parent) };
  } catch (error) {
    return { ok: false, error: stageError(error, stage, run.secrets()) };
  }
}

/** A cleanup call: bounded by `cleanupTimeoutMs`; a failure is logged and kept in `cleanupErrors`. */
export async function cleanupCall<T>(
  run: RunContext,
  stage: string,
  call: () => Promise<T>,
): Promise<Settled<T>> {
  const settled = await callWithDeadline(run, stage, run.options.cleanupTimeoutMs, call);
  if (!settled.ok) {
    run.cleanupErrors.push(settled.error);
    run.log.error("cleanup.failed", {
      stage,
      code: settled.error.code,
      message: settled.error.message,
    });
  }
  return settled;
}
