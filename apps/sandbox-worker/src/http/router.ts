import { InvalidRequestError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerEnv } from "../env.js";
import { authorize } from "./auth.js";
import { costCapabilities, costReport } from "./cost-routes.js";
import { errorResponse, json } from "./responses.js";
import { readWork, startWork } from "./work-routes.js";
import { routeOperatorReads } from "../environment/operator-routes.js";
import { WEBHOOK_PATH, handleEnvironmentWebhook } from "../environment/webhook-route.js";

const WORK_COLLECTION = /^\/v1\/sessions\/([^/]+)\/work$/;
const WORK_ITEM = /^\/v1\/sessions\/([^/]+)\/work\/([^/]+)$/;

function methodNotAllowed(allowed: string): Response {
  const error = new InvalidRequestError({ message: `method not allowed; use ${allowed}`, context: { allowed } });
  return json(405, { error: error.toJSON() }, { allow: allowed });
}

async function route(request: Request, env: WorkerEnv): Promise<Response> {
  const url = new URL(request.url);
  const { pathname } = url;
  if (pathname === "/v1/cost/report") return request.method === "GET" ? costReport(env, url) : methodNotAllowed("GET");
  if (pathname === "/v1/cost/capabilities") return request.method === "GET" ? costCapabilities(env, url) : methodNotAllowed("GET");
  const collection = WORK_COLLECTION.exec(pathname);
  if (collection) return request.method === "POST" ? startWork(request, env, collection[1] ?? "") : methodNotAllowed("POST");
  const item = WORK_ITEM.exec(pathname);
  if (item) return request.method === "GET" ? readWork(env, item[1] ?? "", item[2] ?? "") : methodNotAllowed("GET");
  const operatorRead = await routeOperatorReads(request, env);
  if (operatorRead) return operatorRead;
  throw new NotFoundError({ message: `no route for ${request.method} ${pathname}` });
}

/**
 * The Worker's HTTP API: the environment's webhook (its signature is its credential), then every other
 * request authenticated with the bearer token and routed; errors become JSON.
 */
export async function handleFetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
  try {
    if (new URL(request.url).pathname === WEBHOOK_PATH) return await handleEnvironmentWebhook(request, env, ctx);
    const refusal = await authorize(request, env.API_TOKEN);
    if (refusal) return refusal;
    return await route(request, env);
  } catch (error) {
    return errorResponse(error);
  }
}
