import type * as z from "zod";
import type { ErrorCode } from "./error-codes.js";
import { createError } from "./error-classes.js";

/** How {@link parseRecord} reports a failure. */
export interface ParseRecordOptions {
  /** Name of the record, used in the message (`lease`, `orphan record`, `bridge exec frame`). */
  readonly record: string;
  /** Code of the thrown error. Wire payloads from a peer use `upstream_protocol`. @default "invalid_request" */
  readonly code?: ErrorCode;
}

/**
 * Parses `input` with `schema`. On failure throws a typed error whose message and context name the
 * first path that failed (`metadata.token: ...`). An unknown key of a strict object is named first, as
 * `unknown key <name>`: a misspelt key is the cause, the required key it misses only its consequence.
 * Values are never echoed, since they may be secrets.
 */
export function parseRecord<S extends z.ZodType>(
  schema: S,
  input: unknown,
  options: ParseRecordOptions,
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const { issues } = result.error;
  const issue = issues.find((candidate) => candidate.code === "unrecognized_keys") ?? issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
  const reason =
    issue?.code === "unrecognized_keys" ? unknownKeys(issue.keys) : (issue?.message ?? "invalid");
  throw createError(options.code ?? "invalid_request", {
    message: `invalid ${options.record} at ${path}: ${reason}`,
    context: { record: options.record, path, issues: result.error.issues.length },
    cause: result.error,
  });
}

function unknownKeys(keys: readonly string[]): string {
  return `unknown key${keys.length === 1 ? "" : "s"} ${keys.map((key) => JSON.stringify(key)).join(", ")}`;
}
