import {
  type ManagedRuntimeErrorJSON,
  ManagedRuntimeError,
  InternalError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeRunResult } from "@open-managed-agents/managed-runtime-host";
import * as z from "zod";

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

/** Schema of a stored {@link ManagedRuntimeErrorJSON}. */
export const errorJSONSchema = z.object({
  code: z.string(),
  message: z.string(),
  context: z.record(z.string(), z.unknown()).optional(),
});

/** The options of {@link workOutcomeSchema}, for schemas of outcomes that add their own. */
export const workOutcomeOptions = [
  z.object({
    type: z.literal("completed"),
    revision: z.number(),
    generation: z.number(),
    cleanupErrors: z.array(errorJSONSchema),
  }),
  z.object({
    type: z.literal("failed"),
    error: errorJSONSchema,
    cleanupErrors: z.array(errorJSONSchema),
  }),
  z.object({
    type: z.literal("lease_lost"),
    error: errorJSONSchema,
    cleanupErrors: z.array(errorJSONSchema),
  }),
  z.object({ type: z.literal("conflict"), expiresAt: z.string().nullable() }),
] as const;

/** Schema of a stored {@link WorkOutcome}. */
export const workOutcomeSchema = z.discriminatedUnion("type", workOutcomeOptions);

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
