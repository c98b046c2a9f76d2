import { AbortedError } from "@open-managed-agents/runtime-resource-contract";
import type { CallJournal } from "./journal.js";
import { type FaultPlan, injectedError } from "./faults.js";

/** Where an instrumented port records calls and finds faults. */
export interface InstrumentOptions {
  readonly journal: CallJournal;
  readonly faults: FaultPlan;
}

/**
 * Wraps every method of a port: each call is recorded in the journal under `name` and may be replaced
 * by a fault (throw, hang until its signal fires, or delay). Methods always return promises.
 */
export function instrumentPort<T extends object>(
  name: string,
  port: T,
  options: InstrumentOptions,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const key of Object.keys(port)) {
    const member = (port as Record<string, unknown>)[key];
    if (typeof member !== "function") {
      wrapped[key] = member;
      continue;
    }
    wrapped[key] = (...args: unknown[]) => {
      const record = options.journal.begin(name, key, args[0]);
      const fault = options.faults.match(name, key, record.occurrence);
      const invoke = () =>
        Promise.resolve().then(() =>
          (member as (...values: unknown[]) => unknown).apply(port, args),
        );
      let promise: Promise<unknown>;
      if (fault?.kind === "throw")
        promise = Promise.reject(
          (fault.error ?? ((input: unknown) => injectedError(name, key, input)))(args[0]),
        );
      else if (fault?.kind === "hang") promise = hangUntilAborted(args[0]);
      else if (fault?.kind === "delay")
        promise = (options.faults.scheduler?.sleep(fault.delayMs ?? 0) ?? Promise.resolve()).then(
          invoke,
        );
      else promise = invoke();
      promise.then(
        (value) => options.journal.settle(record, "resolved", value),
        (error: unknown) => options.journal.settle(record, "rejected", error),
      );
      return promise;
    };
  }
  return wrapped as T;
}

/** Never settles, unless the call's input carries a signal; then rejects with `aborted` when it fires. */
function hangUntilAborted(input: unknown): Promise<never> {
  const signal = (input as { signal?: unknown } | null)?.signal;
  return new Promise<never>((_, reject) => {
    if (!(signal instanceof AbortSignal)) return;
    const onAbort = () => reject(new AbortedError({ message: "hung call aborted" }));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}
