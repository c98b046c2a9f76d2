import { createHmac } from "node:crypto";
import { newId, rfc3339 } from "./state/ids.js";

/** Where and how queued work is announced. */
export interface WebhookTarget {
  /** URL the signed event is POSTed to. */
  readonly url: string;
  /** Standard Webhooks signing secret, `whsec_` + base64 key bytes. */
  readonly secret: string;
}

/** One delivery attempt's outcome, kept for inspection. */
export interface WebhookDelivery {
  readonly webhookId: string;
  readonly sessionId: string;
  readonly workId: string;
  readonly status: number | null;
  readonly error: string | null;
}

/** Signs `body` per Standard Webhooks: `v1,` + base64 HMAC-SHA256 over `${id}.${timestamp}.${body}`. */
export function signWebhook(
  secret: string,
  webhookId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(
    secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret,
    "base64",
  );
  return `v1,${createHmac("sha256", key).update(`${webhookId}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The `session.pending` event a queued work item announces (`BetaWebhookEvent`). */
export function pendingEvent(sessionId: string, nowMs: number) {
  return {
    type: "event" as const,
    id: newId("wevt"),
    created_at: rfc3339(nowMs),
    data: {
      type: "session.pending" as const,
      id: sessionId,
      organization_id: "org_local",
      workspace_id: "wrkspc_local",
    },
  };
}

/** POSTs signed events; a failed delivery is retried a few times and then recorded, never thrown. */
export function createWebhookSender(
  target: WebhookTarget,
  options: {
    readonly clock: () => number;
    readonly fetch: typeof fetch;
    readonly attempts: number;
  },
) {
  const deliveries: WebhookDelivery[] = [];
  const inFlight = new Set<Promise<void>>();

  const deliver = async (sessionId: string, workId: string) => {
    const event = pendingEvent(sessionId, options.clock());
    const body = JSON.stringify(event);
    let status: number | null = null;
    let error: string | null = null;
    for (let attempt = 0; attempt < options.attempts; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
      const timestamp = Math.floor(options.clock() / 1000);
      try {
        const response = await options.fetch(target.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": event.id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signWebhook(target.secret, event.id, timestamp, body),
          },
          body,
        });
        await response.arrayBuffer();
        status = response.status;
        error = null;
        if (response.ok) break;
      } catch (cause) {
        error = cause instanceof Error ? cause.message : String(cause);
      }
    }
    deliveries.push({ webhookId: event.id, sessionId, workId, status, error });
  };

  return {
    /** Announces a queued item; returns at once. */
    send(sessionId: string, workId: string): void {
      const promise = deliver(sessionId, workId).finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    },
    deliveries: (): readonly WebhookDelivery[] => [...deliveries],
    /** Waits for deliveries under way. */
    async settle(): Promise<void> {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
