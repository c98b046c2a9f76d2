import { InvalidRequestError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { matchRoute } from "@open-managed-agents/runtime-utils/http";
import type { WorkerContext } from "../config.js";
import { authorize } from "./auth.js";
import { HEALTH_PATH, health } from "./health-route.js";
import { costCapabilities, costReport } from "./cost-routes.js";
import { errorResponse, json } from "./responses.js";
import { readWork, startWork } from "./work-routes.js";
import { CONFORMANCE_PATH, runConformanceRoute } from "../certification/conformance-route.js";
import { requestClaimPass } from "../environment/claim-coordinator.js";
import { routeOperatorReads } from "../environment/operator-routes.js";
import { WEBHOOK_PATH, handleEnvironmentWebhook } from "../environment/webhook-route.js";

/** Operators drain the environment's queue now, without waiting for a webhook or the cron trigger. */
const CLAIM_PASS = "/v1/environment/claim";

type Handler = (
  request: Request,
  context: WorkerContext,
  url: URL,
  params: Record<string, string>,
) => Promise<Response>;

const ROUTES: readonly { method: string; pattern: string; handler: Handler }[] = [
  {
    method: "GET",
    pattern: "/v1/cost/report",
    handler: (_request, context, url) => costReport(context, url),
  },
  {
    method: "GET",
    pattern: "/v1/cost/capabilities",
    handler: (_request, context, url) => costCapabilities(context, url),
  },
  {
    method: "POST",
    pattern: "/v1/sessions/:sessionId/work",
    handler: (request, context, _url, params) =>
      startWork(request, context, params.sessionId ?? ""),
  },
  {
    method: "GET",
    pattern: "/v1/sessions/:sessionId/work/:workId",
    handler: (_request, context, _url, params) =>
      readWork(context.bindings, params.sessionId ?? "", params.workId ?? ""),
  },
  {
    method: "POST",
    pattern: CLAIM_PASS,
    // Settings are read here, not only inside the coordinator: an error thrown in a Durable Object
    // reaches the caller as a plain Error and would lose its code.
    handler: async (_request, context) => {
      context.environment();
      return json(200, await requestClaimPass(context.bindings));
    },
  },
];

function methodNotAllowed(allowed: string): Response {
  const error = new InvalidRequestError({
    message: `method not allowed; use ${allowed}`,
    context: { allowed },
  });
  return json(405, { error: error.toJSON() }, { allow: allowed });
}

async function route(request: Request, context: WorkerContext): Promise<Response> {
  const url = new URL(request.url);
  const { pathname } = url;
  const match = matchRoute(ROUTES, request.method, pathname);
  if (match.kind === "matched") return match.route.handler(request, context, url, match.params);
  if (match.kind === "method_not_allowed") return methodNotAllowed(match.allowed.join(", "));
  if (pathname === CONFORMANCE_PATH && context.certification)
    return runConformanceRoute(request, context);
  const operatorRead = await routeOperatorReads(request, context.bindings);
  if (operatorRead) return operatorRead;
  throw new NotFoundError({ message: `no route for ${request.method} ${pathname}` });
}

/**
 * The Worker's HTTP API: the unauthenticated health check, the environment's webhook (its signature is
 * its credential), then every other request authenticated with the bearer token and routed; errors become
 * JSON. A bad setting refuses every route but the health check with its `invalid_config`.
 */
export async function handleFetch(
  request: Request,
  context: WorkerContext,
  ctx: ExecutionContext,
): Promise<Response> {
  try {
    const { pathname } = new URL(request.url);
    if (pathname === HEALTH_PATH) return health(request, context);
    if (pathname === WEBHOOK_PATH) return await handleEnvironmentWebhook(request, context, ctx);
    const refusal = await authorize(request, context.apiToken);
    if (refusal) return refusal;
    context.config();
    return await route(request, context);
  } catch (error) {
    return errorResponse(error);
  }
}
