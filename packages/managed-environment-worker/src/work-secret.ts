import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** What a work item's `secret` carries, once decoded. */
export interface DecodedWorkSecret {
  /** Bearer of the item's heartbeat, stop and session calls; null when the secret carries none. */
  readonly sessionsToken: string | null;
  /** Managed Agents API origin the item's calls go to; null when the secret names none. */
  readonly apiBaseUrl: string | null;
}

// The payload is untrusted: fields are checked one by one so an error can name the field, never its value.
const payloadSchema = z.looseObject({
  sessions_token: z.string().optional(),
  api_base_url: z.url({ protocol: /^https?$/ }).optional(),
});

/**
 * Decodes a work item's `secret` (URL-safe base64 of a JSON object). A missing secret or one without
 * `sessions_token` decodes to `sessionsToken: null` (the item's calls then use the environment key);
 * anything that is not base64 JSON, or carries a malformed field, is `invalid_request` naming the field.
 * Messages and contexts never contain the secret.
 */
export function decodeWorkSecret(secret: string | null | undefined): DecodedWorkSecret {
  if (secret === null || secret === undefined || secret === "")
    return { sessionsToken: null, apiBaseUrl: null };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(secret, "base64url").toString("utf8"));
  } catch (cause) {
    throw new InvalidRequestError({
      message: "work secret is not URL-safe base64 of a JSON object",
      context: { field: "secret" },
      cause,
    });
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new InvalidRequestError({
      message: "work secret does not decode to a JSON object",
      context: { field: "secret" },
    });
  }
  const parsed = payloadSchema.safeParse(payload);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.map(String).join(".") ?? "(root)";
    throw new InvalidRequestError({
      message: `work secret field ${field} is malformed`,
      context: { field: `secret.${field}` },
    });
  }
  const token = parsed.data.sessions_token;
  return {
    sessionsToken: token === undefined || token === "" ? null : token,
    apiBaseUrl: parsed.data.api_base_url ?? null,
  };
}
