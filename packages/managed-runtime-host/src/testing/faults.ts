import type { Scheduler } from "../time.js";

/** `throw` rejects at once; `hang` never settles unless the call's signal fires; `delay` waits, then calls the port. */
export type FaultKind = "throw" | "hang" | "delay";

/** A fault for calls of one port method. */
export interface FaultRule {
  readonly port: string;
  readonly method: string;
  readonly kind: FaultKind;
  /** Only this 1-based occurrence; every call when omitted. */
  readonly occurrence?: number;
  /**
   * Builds the thrown error. The default message embeds the fence token the call received, so a test
   * can prove the host redacts what ports throw.
   */
  readonly error?: (input: unknown) => unknown;
  /** For `delay`: how long, on the fault plan's scheduler. The call's signal is ignored, like a slow port. */
  readonly delayMs?: number;
}

/** The faults instrumented ports consult on every call. */
export interface FaultPlan {
  readonly rules: readonly FaultRule[];
  readonly scheduler: Scheduler | undefined;
  add(rule: FaultRule): void;
  clear(): void;
  /** The first rule matching this call, if any. */
  match(port: string, method: string, occurrence: number): FaultRule | undefined;
}

/** Creates an empty fault plan. `scheduler` is needed only for `delay` rules. */
export function createFaultPlan(options: { readonly scheduler?: Scheduler } = {}): FaultPlan {
  const rules: FaultRule[] = [];
  return {
    rules,
    scheduler: options.scheduler,
    add: (rule) => void rules.push(rule),
    clear: () => void (rules.length = 0),
    match: (port, method, occurrence) =>
      rules.find(
        (rule) =>
          rule.port === port &&
          rule.method === method &&
          (rule.occurrence === undefined || rule.occurrence === occurrence),
      ),
  };
}

/** The default injected error: its message carries the token of the fence the call received. */
export function injectedError(port: string, method: string, input: unknown): Error {
  const record = (input ?? {}) as { fence?: { token?: unknown }; token?: unknown };
  const token =
    typeof record.fence?.token === "string"
      ? record.fence.token
      : typeof record.token === "string"
        ? record.token
        : "none";
  return new Error(`injected ${port}.${method} failure while holding fence token ${token}`);
}
