import type { TerminationReason } from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";

/** `completed` once the final publish succeeded, `lease_lost` after a loss, `failed` otherwise. */
export function cleanupReason(run: RunContext): TerminationReason {
  if (run.finalPublish) return "completed";
  return run.outcome?.type === "lease_lost" ? "lease_lost" : "failed";
}
