import {
  InvalidConfigError,
  UnauthorizedError,
} from "@open-managed-agents/runtime-resource-contract";
import { type BearerRefusal, bearerRefusal } from "@open-managed-agents/runtime-utils/http";
import { errorResponse } from "./responses.js";

/** Shortest `API_TOKEN` the Worker accepts; a shorter one refuses every request. */
export const MIN_TOKEN_LENGTH = 16;

const CHALLENGE = { "www-authenticate": 'Bearer realm="oma-sandbox-worker"' };
const REFUSALS: Readonly<Record<BearerRefusal, string>> = {
  missing: "missing Authorization header",
  "not a Bearer credential": "Authorization must use the Bearer scheme",
  "wrong token": "invalid bearer token",
};

/**
 * Checks `Authorization: Bearer <API_TOKEN>`. Returns the refusal, or null when the request may go on.
 * Without a configured token (or with one shorter than {@link MIN_TOKEN_LENGTH}) every request is refused.
 */
export async function authorize(
  request: Request,
  apiToken: string | undefined,
): Promise<Response | null> {
  if (typeof apiToken !== "string" || apiToken.length < MIN_TOKEN_LENGTH) {
    const problem =
      typeof apiToken !== "string" || apiToken === ""
        ? "is not set"
        : `is shorter than ${MIN_TOKEN_LENGTH} characters`;
    return errorResponse(
      new InvalidConfigError({
        message: `API_TOKEN ${problem}: every request is refused`,
        context: { field: "API_TOKEN" },
      }),
    );
  }
  // Digests of both sides are compared in constant time, so neither length nor content of the token leaks.
  const refusal = await bearerRefusal(
    request.headers.get("authorization"),
    apiToken,
    crypto.subtle,
  );
  return refusal === null
    ? null
    : errorResponse(new UnauthorizedError({ message: REFUSALS[refusal] }), CHALLENGE);
}
