import type * as z from "zod";

type Issue = z.core.$ZodIssue;

/**
 * The issue worth reporting from a failed parse, with its dotted field path. For a union that failed in
 * every branch, the branch-specific rule (a custom size's limits, an enum's options) is preferred over
 * "invalid input".
 */
export function reportableIssue(
  error: z.ZodError,
  fallbackField: string,
): { field: string; message: string } {
  let issue: Issue | undefined = error.issues[0];
  let prefix: PropertyKey[] = [];
  while (issue?.code === "invalid_union") {
    const branches = issue.errors.flat();
    const chosen =
      branches.find(
        (candidate) => candidate.code !== "invalid_type" && candidate.code !== "invalid_value",
      ) ?? branches.find((candidate) => candidate.code === "invalid_value");
    if (chosen === undefined) break;
    prefix = [...prefix, ...issue.path];
    issue = chosen;
  }
  const path = [...prefix, ...(issue?.path ?? [])];
  return {
    field: path.length > 0 ? path.map(String).join(".") : fallbackField,
    message: issue?.message ?? "invalid",
  };
}
