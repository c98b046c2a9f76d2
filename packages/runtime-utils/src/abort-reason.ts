import { AbortedError } from "@open-managed-agents/runtime-resource-contract";

/**
 * The error a fired signal stands for: its reason when that is an Error (a lost lease, a cancelled
 * timer), else a generic `aborted` error. Every abortable helper here rejects with it.
 */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error
    ? signal.reason
    : new AbortedError({ message: "operation aborted" });
}
