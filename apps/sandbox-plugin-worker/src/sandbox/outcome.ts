import {
  ManagedRuntimeError,
  type ManagedRuntimeErrorJSON,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * What a Durable Object method returns. Errors thrown across a Durable Object call keep only their
 * message, so typed failures travel as data in their wire form instead.
 */
export type Outcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: ManagedRuntimeErrorJSON };

/** A successful outcome. */
export function success<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

/** A failed outcome carrying a typed error. */
export function failure<T = never>(error: ManagedRuntimeError): Outcome<T> {
  return { ok: false, error: error.toJSON() };
}

/** Runs `work`, turning a thrown typed error into a failed outcome; anything else is rethrown. */
export async function settle<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return success(await work());
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return failure(error);
    throw error;
  }
}
