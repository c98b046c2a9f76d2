import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { errorJSON } from "../work/work-outcome.js";

/** A JSON response. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** An error as `{error: {code, message, context?}}` with the status its code maps to. */
export function errorResponse(error: unknown, headers: Record<string, string> = {}): Response {
  const status = ManagedRuntimeError.isInstance(error) ? error.httpStatus : 500;
  return json(status, { error: errorJSON(error) }, headers);
}
