import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";

/** The typed error `run` throws or rejects with; fails the test when it succeeds or throws anything else. */
export async function typedError(run: () => unknown): Promise<ManagedRuntimeError> {
  try {
    await run();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a typed error");
}
