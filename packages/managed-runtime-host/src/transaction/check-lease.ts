import {
  InvalidRequestError,
  type ManagedSandboxLease,
  parseManagedSandboxLease,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";

/** A lease must be JSON-safe and carry no fence token. */
export function checkLease(run: RunContext, lease: ManagedSandboxLease, stage: string): void {
  parseManagedSandboxLease(lease);
  const serialized = JSON.stringify(lease);
  if (run.secrets().some((token) => serialized.includes(token))) {
    throw markHostError(
      new InvalidRequestError({
        message: "the sandbox lease carries the fence token",
        context: { stage },
      }),
    );
  }
}

/** Same provider and runtime id. */
export function sameRuntime(a: ManagedSandboxLease, b: ManagedSandboxLease): boolean {
  return a.provider === b.provider && a.runtimeId === b.runtimeId;
}
