import { InvalidRequestError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { matchRoute } from "@open-managed-agents/runtime-utils/http";
import { readConfig } from "../config.js";
import type { WorkerEnv } from "../env.js";
import { readEnvironmentSettings } from "../environment/settings.js";
import { authorize } from "./auth.js";
import { HEALTH_PATH, health } from "./health-route.js";
import { costCapabilities, costReport } from "./cost-routes.js";
import { errorResponse, json } from "./responses.js";
import { readWork, startWork } from "./work-routes.js";
import { CONFORMANCE_PATH, certificationEnabled, runConformanceRoute } from "../certification/conformance-route.js";
import { requestClaimPass } from "../environment/claim-coordinator.js";
import { routeOperatorReads } from "../environment/operator-routes.js";
import { WEBHOOK_PATH, handleEnvironmentWebhook } from "../environment/webhook-route.js";

/** Operators drain the environment's queue now, without waiting for a webhook or the cron trigger. */
const CLAIM_PASS = "/v1/environment/claim";

type Handler = (request: Request, env: WorkerEnv, url: URL, params: Record<string, string>) => Promise<Response>;

const ROUTES: readonly { method: string; pattern: string; handler: Handler }[] = [
  { method: "GET", pattern: "/v1/cost/report", handler: (_request, env, url) => costReport(env, url) },
  { method: "GET", pattern: "/v1/cost/capabilities", handler: (_request, env, url) => costCapabilities(env, url) },
  { method: "POST", pattern: "/v1/sessions/:sessionId/work", handler: (request, env, _url, params) => startWork(request, env, params.sessionId ?? "") },
  { method: "GET", pattern: "/v1/sessions/:sessionId/work/:workId", handler: (_request, env, _url, params) => readWork(env, params.sessionId ?? "", params.workId ?? "") },
  {
    method: "POST",
    pattern: CLAIM_PASS,
    // Settings are read here, not only inside the coordinator: an error thrown in a Durable Object
    // reaches the caller as a plain Error and would lose its code.
    handler: async (_request, env) => {
      readEnvironmentSettings(env);
      return json(200, await requestClaimPass(env));
    },
  },
];

function methodNotAllowed(allowed: string): Response {
  const error = new InvalidRequestError({ message: `method not allowed; use ${allowed}`, context: { allowed } });
  return json(405, { error: error.toJSON() }, { allow: allowed });
}

async function route(request: Request, env: WorkerEnv): Promise<Response> {
  const url = new URL(request.url);
  const { pathname } = url;
  const match = matchRoute(ROUTES, request.method, pathname);
  if (match.kind === "matched") return match.route.handler(request, env, url, match.params);
  if (match.kind === "method_not_allowed") return methodNotAllowed(match.allowed.join(", "));
  if (pathname === CONFORMANCE_PATH && certificationEnabled(env)) return runConformanceRoute(request, env);
  const operatorRead = await routeOperatorReads(request, env);
  if (operatorRead) return operatorRead;
  throw new NotFoundError({ message: `no route for ${request.method} ${pathname}` });
}

/**
 * The Worker's HTTP API: the unauthenticated health check, the environment's webhook (its signature is
 * its credential), then every other request authenticated with the bearer token and routed; errors become
 * JSON. A bad setting refuses every route but the health check with its `invalid_config`.
 */
export async function handleFetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
  try {
    const { pathname } = new URL(request.url);
    if (pathname === HEALTH_PATH) return health(request, env);
    if (pathname === WEBHOOK_PATH) return await handleEnvironmentWebhook(request, env, ctx);
    const refusal = await authorize(request, env.API_TOKEN);
    if (refusal) return refusal;
    readConfig(env);
    return await route(request, env);
  } catch (error) {
    return errorResponse(error);
  }
}
