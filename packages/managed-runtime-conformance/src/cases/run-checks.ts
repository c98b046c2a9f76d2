import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import { check, describeError } from "./assertions.js";
import type { CaseRun } from "./case-context.js";

/** Fails unless a run completed, naming its error when it did not. */
export function checkCompleted(run: CaseRun, what: string): void {
  const { result } = run;
  const detail =
    result.type === "failed" || result.type === "lease_lost"
      ? `: ${describeError(result.error)}`
      : "";
  check(result.type === "completed", `${what} ended ${result.type}${detail}`);
}

/** `sha256:<hex>` of bytes. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${sha256HexSync(bytes)}`;
}
