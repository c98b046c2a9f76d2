import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { expect } from "vitest";

/** Runs a script in the runtime, expects it to succeed, and returns its stdout. */
export async function run(runtime: ManagedSandboxRuntime, script: string): Promise<string> {
  const result = await runtime.exec(script);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** The typed error's code a promise rejects with, or `not refused: …` when it resolves or rejects otherwise. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  return (await refusalOf(promise)).split(": ")[0] as string;
}

/** `<code>: <message>` of the typed error a promise rejects with, or `not refused: …`. */
export async function refusalOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  return ManagedRuntimeError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : `not refused: ${String(error)}`;
}
