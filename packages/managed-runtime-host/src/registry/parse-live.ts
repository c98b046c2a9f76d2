import type * as z from "zod";
import { drift } from "./capability-drift.js";

/** Parses a live port's answer; a shape the contract refuses is drift at the first failing path. */
export function parseLive<S extends z.ZodType>(
  provider: string,
  schema: S,
  answer: unknown,
  prefix?: string,
): z.output<S> {
  const result = schema.safeParse(answer);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".") || "(root)";
  throw drift(provider, field, "a contract value", `malformed (${issue?.message ?? "invalid"})`);
}
