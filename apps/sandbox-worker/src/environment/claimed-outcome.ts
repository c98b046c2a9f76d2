import type { WorkItemReport } from "@open-managed-agents/managed-environment-worker";
import type { ManagedRuntimeErrorJSON } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import {
  type WorkOutcome,
  errorJSON,
  errorJSONSchema,
  outcomeOf,
  workOutcomeOptions,
} from "../work/work-outcome.js";

/** How a claimed item ended, as stored in D1 and returned by the operator API. Holds no credential. */
export type ClaimedOutcome =
  | WorkOutcome
  /** A health check or a terminated session: stopped without running anything. */
  | { readonly type: "skipped"; readonly reason: string }
  /** Refused before running (bad secret, foreign session, profile refused): stopped. */
  | { readonly type: "rejected"; readonly error: ManagedRuntimeErrorJSON }
  /** Still fenced by the session's previous item after every retry: left to be reclaimed. */
  | { readonly type: "deferred"; readonly reason: string; readonly attempts: number }
  /** The Durable Object restarted mid-run: the lease lapses and the platform queues the item again. */
  | { readonly type: "interrupted" };

/** The status column of a claimed item. */
export type ClaimedStatus = "running" | ClaimedOutcome["type"];

/** The stored form of an environment worker report. */
export function claimedOutcomeOf(report: WorkItemReport): ClaimedOutcome {
  const { outcome } = report;
  switch (outcome.type) {
    case "ran":
      return outcomeOf(outcome.result);
    case "skipped":
      return { type: "skipped", reason: outcome.reason };
    case "rejected":
      return { type: "rejected", error: errorJSON(outcome.error) };
    case "deferred":
      return { type: "deferred", reason: outcome.reason, attempts: outcome.attempts };
  }
}

/** Schema of a stored {@link ClaimedOutcome}. */
export const claimedOutcomeSchema = z.discriminatedUnion("type", [
  ...workOutcomeOptions,
  z.object({ type: z.literal("skipped"), reason: z.string() }),
  z.object({ type: z.literal("rejected"), error: errorJSONSchema }),
  z.object({ type: z.literal("deferred"), reason: z.string(), attempts: z.number() }),
  z.object({ type: z.literal("interrupted") }),
]);
