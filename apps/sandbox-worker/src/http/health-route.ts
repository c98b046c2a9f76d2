import {
  InvalidConfigError,
  InvalidRequestError,
} from "@open-managed-agents/runtime-resource-contract";
import type { WorkerContext } from "../config.js";
import { errorJSON } from "../work/work-outcome.js";
import { MIN_TOKEN_LENGTH } from "./auth.js";
import { json } from "./responses.js";

/** The uptime check's route: no credential, no binding touched. */
export const HEALTH_PATH = "/health";

/**
 * `GET /health`: 200 `{status: "ok"}` when the settings parse and `API_TOKEN` is usable, otherwise 503
 * `{status: "unhealthy", error}` with the `invalid_config` error that refuses the other routes (it names
 * the variable, never its value).
 */
export function health(request: Request, context: WorkerContext): Response {
  if (request.method !== "GET" && request.method !== "HEAD") {
    const error = new InvalidRequestError({
      message: "method not allowed; use GET",
      context: { allowed: "GET, HEAD" },
    });
    return json(405, { error: error.toJSON() }, { allow: "GET, HEAD" });
  }
  try {
    context.config();
    if (typeof context.apiToken !== "string" || context.apiToken.length < MIN_TOKEN_LENGTH) {
      throw new InvalidConfigError({
        message: `API_TOKEN is not set or shorter than ${MIN_TOKEN_LENGTH} characters: every request is refused`,
        context: { field: "API_TOKEN" },
      });
    }
  } catch (error) {
    return json(503, { status: "unhealthy", error: errorJSON(error) });
  }
  return json(200, { status: "ok" });
}
