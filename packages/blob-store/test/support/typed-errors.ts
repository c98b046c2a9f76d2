import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";

/** The typed error a promise rejects with; fails the test when it resolves or rejects untyped. */
export async function errorOf(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error;
}

/** The code of the typed error a promise rejects with. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  return (await errorOf(promise)).code;
}
