import * as z from "zod";
import {
  type RuntimeOrphanEnqueueInput,
  managedSandboxLeaseSchema,
  nonEmptyString,
  parseRecord,
  runtimeResourceScopeSchema,
  terminationReasonSchema,
} from "@open-managed-agents/runtime-resource-contract";

/** Longest error message an orphan record keeps; longer ones are cut and end with an ellipsis. */
export const MAX_ORPHAN_ERROR_LENGTH = 2000;

/** Most records one `list` call returns. */
export const MAX_ORPHAN_LIST_LIMIT = 1000;

const enqueueInputSchema = z.object({
  scope: runtimeResourceScopeSchema,
  generation: z.number().int().nonnegative(),
  ownerId: nonEmptyString,
  sandbox: managedSandboxLeaseSchema,
  reason: terminationReasonSchema,
  error: z.string(),
});
const listInputSchema = z.object({ limit: z.number().int().positive().max(MAX_ORPHAN_LIST_LIMIT) });
const failedInputSchema = z.object({ id: nonEmptyString, error: z.string() });
const resolveInputSchema = z.object({ id: nonEmptyString });

/** A validated enqueue request (its error clipped). */
export type OrphanEnqueueRequest = RuntimeOrphanEnqueueInput;

export function parseEnqueueInput(input: unknown): OrphanEnqueueRequest {
  const parsed = parseRecord(enqueueInputSchema, input, { record: "orphan enqueue input" });
  return { ...parsed, error: clipError(parsed.error) };
}

export function parseListInput(input: unknown): { limit: number } {
  return parseRecord(listInputSchema, input, { record: "orphan list input" });
}

export function parseFailedInput(input: unknown): { id: string; error: string } {
  const parsed = parseRecord(failedInputSchema, input, { record: "orphan failed input" });
  return { id: parsed.id, error: clipError(parsed.error) };
}

export function parseResolveInput(input: unknown): { id: string } {
  return parseRecord(resolveInputSchema, input, { record: "orphan resolve input" });
}

/** Bounds a stored error message to {@link MAX_ORPHAN_ERROR_LENGTH} characters. */
export function clipError(message: string): string {
  return message.length <= MAX_ORPHAN_ERROR_LENGTH
    ? message
    : `${message.slice(0, MAX_ORPHAN_ERROR_LENGTH - 1)}…`;
}
