import {
  InvalidRequestError,
  LimitExceededError,
  UnauthorizedError,
} from "@open-managed-agents/runtime-resource-contract";
import { readBoundedBytes } from "@open-managed-agents/runtime-utils";
import type { WorkerContext } from "../config.js";
import { json } from "../http/responses.js";
import { createConsoleLogger } from "../logger.js";
import { requestClaimPass } from "./claim-coordinator.js";
import { createManagedAgentsClient } from "./client.js";

/** Where the platform delivers the environment's webhooks (register `https://<worker>/v1/environment/webhook`). */
export const WEBHOOK_PATH = "/v1/environment/webhook";

/** Largest webhook body accepted. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

const SIGNATURE_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

/**
 * `POST /v1/environment/webhook`: verifies the Standard Webhooks signature with the SDK
 * (`beta.webhooks.unwrap`, the `WEBHOOK_SECRET` key; a stale timestamp is refused too) and drains the
 * queue in `waitUntil`. A bad or missing signature is 401 `unauthorized` and claims nothing. 202 with
 * the event type otherwise. No bearer token: the signature is the credential.
 */
export async function handleEnvironmentWebhook(
  request: Request,
  context: WorkerContext,
  ctx: ExecutionContext,
): Promise<Response> {
  if (request.method !== "POST") {
    const error = new InvalidRequestError({
      message: "method not allowed; use POST",
      context: { allowed: "POST" },
    });
    return json(405, { error: error.toJSON() }, { allow: "POST" });
  }
  const settings = context.environment();
  const tooLarge = () =>
    new LimitExceededError({
      message: `webhook body is larger than ${MAX_WEBHOOK_BYTES} bytes`,
      context: { limit: MAX_WEBHOOK_BYTES },
    });
  if (Number(request.headers.get("content-length") ?? "0") > MAX_WEBHOOK_BYTES) throw tooLarge();
  // Read no more than the limit: a larger body is refused without being held.
  const body = new TextDecoder().decode(
    await readBoundedBytes(request.body, { maxBytes: MAX_WEBHOOK_BYTES, tooLarge }),
  );
  const headers: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  let event: { type?: unknown; data?: { type?: unknown } };
  try {
    event = createManagedAgentsClient(settings).beta.webhooks.unwrap(body, {
      headers,
      key: settings.webhookSecret,
    }) as typeof event;
  } catch (cause) {
    throw new UnauthorizedError({
      message: "webhook signature is missing, invalid or stale",
      cause,
    });
  }
  const eventType =
    typeof event.data?.type === "string"
      ? event.data.type
      : typeof event.type === "string"
        ? event.type
        : "unknown";
  const logger = createConsoleLogger(context.config().logLevel);
  logger.info("environment.webhook_accepted", {
    webhookId: headers["webhook-id"] ?? null,
    eventType,
  });
  ctx.waitUntil(
    requestClaimPass(context.bindings).catch((error: unknown) => {
      logger.error("environment.claim_failed", {
        message: error instanceof Error ? error.message : String(error),
      });
    }),
  );
  return json(202, { eventType });
}
