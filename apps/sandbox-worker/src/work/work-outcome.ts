import {
  type ManagedRuntimeErrorJSON,
  ManagedRuntimeError,
  InternalError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeRunResult } from "@open-managed-agents/managed-runtime-host";

/** How a work item ended, as stored in D1 and returned by the API. Holds no fence token or credential. */
export type WorkOutcome =
  | {
      readonly type: "completed";
      readonly revision: number;
      readonly generation: number;
      readonly cleanupErrors: readonly ManagedRuntimeErrorJSON[];
    }
  | {
      readonly type: "failed";
      readonly error: ManagedRuntimeErrorJSON;
      readonly cleanupErrors: readonly ManagedRuntimeErrorJSON[];
    }
  | {
      readonly type: "lease_lost";
      readonly error: ManagedRuntimeErrorJSON;
      readonly cleanupErrors: readonly ManagedRuntimeErrorJSON[];
    }
  | { readonly type: "conflict"; readonly expiresAt: string | null };

/** The wire form of any thrown value; untyped errors become `internal` with their message. */
export function errorJSON(error: unknown): ManagedRuntimeErrorJSON {
  if (ManagedRuntimeError.isInstance(error)) return error.toJSON();
  const message =
    error instanceof Error ? `${error.name}: ${error.message}` : "non-error value thrown";
  return new InternalError({ message }).toJSON();
}

/** The stored form of a host result. */
export function outcomeOf(result: ManagedRuntimeRunResult): WorkOutcome {
  switch (result.type) {
    case "completed":
      return {
        type: "completed",
        revision: result.revision,
        generation: result.generation,
        cleanupErrors: result.cleanupErrors.map(errorJSON),
      };
    case "conflict":
      return { type: "conflict", expiresAt: result.expiresAt };
    case "failed":
    case "lease_lost":
      return {
        type: result.type,
        error: errorJSON(result.error),
        cleanupErrors: result.cleanupErrors.map(errorJSON),
      };
  }
}
