import { InvalidConfigError, UnauthorizedError } from "@open-managed-agents/runtime-resource-contract";
import { errorResponse } from "./responses.js";

/** Shortest `API_TOKEN` the Worker accepts; a shorter one refuses every request. */
export const MIN_TOKEN_LENGTH = 16;

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i;
const CHALLENGE = { "www-authenticate": 'Bearer realm="oma-sandbox-worker"' };

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

/** Compares equal-length digests in constant time, so neither length nor content of the token leaks. */
async function sameToken(presented: string, expected: string): Promise<boolean> {
  const [left, right] = await Promise.all([digest(presented), digest(expected)]);
  return crypto.subtle.timingSafeEqual(left, right);
}

/**
 * Checks `Authorization: Bearer <API_TOKEN>`. Returns the refusal, or null when the request may go on.
 * Without a configured token (or with one shorter than {@link MIN_TOKEN_LENGTH}) every request is refused.
 */
export async function authorize(request: Request, apiToken: string | undefined): Promise<Response | null> {
  if (typeof apiToken !== "string" || apiToken.length < MIN_TOKEN_LENGTH) {
    const problem = typeof apiToken !== "string" || apiToken === "" ? "is not set" : `is shorter than ${MIN_TOKEN_LENGTH} characters`;
    return errorResponse(new InvalidConfigError({ message: `API_TOKEN ${problem}: every request is refused`, context: { field: "API_TOKEN" } }));
  }
  const header = request.headers.get("authorization");
  if (header === null) return errorResponse(new UnauthorizedError({ message: "missing Authorization header" }), CHALLENGE);
  const match = BEARER.exec(header);
  if (match === null) return errorResponse(new UnauthorizedError({ message: "Authorization must use the Bearer scheme" }), CHALLENGE);
  if (!(await sameToken(match[1] ?? "", apiToken))) return errorResponse(new UnauthorizedError({ message: "invalid bearer token" }), CHALLENGE);
  return null;
}
