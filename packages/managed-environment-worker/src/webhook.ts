import {
  InvalidConfigError,
  UnauthorizedError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedAgentsClient } from "./sdk-client.js";

/** What {@link ManagedEnvironmentWorker.handleWebhook} takes: the raw body and the request's headers. */
export interface WebhookRequest {
  /** The request body exactly as received; the signature covers these bytes. */
  readonly body: string;
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Keeps the scheduled drain alive after the response (Workers' `ctx.waitUntil`). */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

/** How a verified webhook was handled. */
export interface WebhookReceipt {
  /** The event's `type`, e.g. `session.status_idled`. */
  readonly eventType: string;
  /** True when this `webhook-id` was seen before: no second drain was scheduled. */
  readonly duplicate: boolean;
}

/**
 * Verifies a Standard Webhooks request with the SDK (`beta.webhooks.unwrap`: HMAC over id, timestamp
 * and body; a timestamp outside the tolerance is refused as stale). A bad, missing or stale signature
 * is `unauthorized`; no signing key is `invalid_config`.
 */
export function verifyWebhook(
  client: ManagedAgentsClient,
  request: WebhookRequest,
  key: string | undefined,
): { id: string; eventType: string } {
  const signingKey = key ?? client.webhookKey ?? undefined;
  if (!signingKey)
    throw new InvalidConfigError({
      message: "no webhook signing key: pass webhookKey or configure the client's",
      context: { field: "webhookKey" },
    });
  const headers = flattenHeaders(request.headers);
  let event: { type?: unknown; data?: { type?: unknown } };
  try {
    event = client.beta.webhooks.unwrap(request.body, { headers, key: signingKey }) as typeof event;
  } catch (cause) {
    throw new UnauthorizedError({
      message: "webhook signature is missing, invalid or stale",
      context: { webhookId: headers["webhook-id"] ?? null },
      cause,
    });
  }
  // Managed Agents events wrap the subject: `{type: "event", data: {type: "session.pending", …}}`.
  const type = typeof event.data?.type === "string" ? event.data.type : event.type;
  return {
    id: headers["webhook-id"] ?? "",
    eventType: typeof type === "string" ? type : "unknown",
  };
}

function flattenHeaders(headers: WebhookRequest["headers"]): Record<string, string> {
  const flat: Record<string, string> = {};
  if (
    typeof (headers as Headers).forEach === "function" &&
    typeof (headers as Headers).get === "function"
  ) {
    (headers as Headers).forEach((value, name) => {
      flat[name.toLowerCase()] = value;
    });
    return flat;
  }
  for (const [name, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = typeof value === "string" ? value : value.join(", ");
  }
  return flat;
}

/** Remembers the last `size` webhook ids, so a redelivered webhook schedules nothing. */
export function createRecentIds(size: number): { seen(id: string): boolean } {
  const ids = new Set<string>();
  return {
    seen(id) {
      if (id === "") return false;
      if (ids.has(id)) return true;
      ids.add(id);
      if (ids.size > size) ids.delete(ids.values().next().value as string);
      return false;
    },
  };
}
