import { NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { loadPluginConfig } from "./config/plugin-config.js";
import { requireBearer } from "./http/auth.js";
import { info, openApi } from "./http/info-routes.js";
import {
  exec,
  execStream,
  forwardPort,
  listDirectory,
  makeDirectory,
  readFile,
  removeFile,
  writeFile,
} from "./http/operation-routes.js";
import { errorResponse, withProtocolHeader } from "./http/responses.js";
import { type Route, findRoute } from "./http/router.js";
import {
  createSandbox,
  deleteSandbox,
  getSandboxView,
  listSandboxes,
  updateTtl,
} from "./http/sandbox-routes.js";
import { unsupported } from "./http/unsupported-routes.js";
import { API_PREFIX } from "./protocol/constants.js";

const sandbox = `${API_PREFIX}/sandboxes/:id`;

/** Every route of the adapter protocol (see docs/adapter-protocol.md and `GET /adapter/v1/openapi.json`). */
export const ROUTES: readonly Route[] = [
  { method: "GET", pattern: `${API_PREFIX}/info`, handler: info },
  { method: "GET", pattern: `${API_PREFIX}/openapi.json`, handler: openApi },
  { method: "POST", pattern: `${API_PREFIX}/sandboxes`, handler: createSandbox },
  { method: "GET", pattern: `${API_PREFIX}/sandboxes`, handler: listSandboxes },
  { method: "GET", pattern: sandbox, handler: getSandboxView },
  { method: "DELETE", pattern: sandbox, handler: deleteSandbox },
  { method: "PUT", pattern: `${sandbox}/ttl`, handler: updateTtl },
  { method: "POST", pattern: `${sandbox}/exec`, handler: exec },
  { method: "POST", pattern: `${sandbox}/exec/stream`, handler: execStream },
  { method: "GET", pattern: `${sandbox}/files`, handler: readFile },
  { method: "PUT", pattern: `${sandbox}/files`, handler: writeFile },
  { method: "DELETE", pattern: `${sandbox}/files`, handler: removeFile },
  { method: "GET", pattern: `${sandbox}/directories`, handler: listDirectory },
  { method: "POST", pattern: `${sandbox}/directories`, handler: makeDirectory },
  { method: "*", pattern: `${sandbox}/ports/:port/*rest`, handler: forwardPort },
  { method: "POST", pattern: `${sandbox}/stop`, handler: unsupported("stop") },
  { method: "POST", pattern: `${sandbox}/start`, handler: unsupported("start") },
  { method: "POST", pattern: `${sandbox}/pause`, handler: unsupported("pause") },
  { method: "POST", pattern: `${sandbox}/resume`, handler: unsupported("resume") },
  { method: "POST", pattern: `${sandbox}/snapshots`, handler: unsupported("snapshots") },
  { method: "GET", pattern: `${sandbox}/snapshots`, handler: unsupported("snapshots") },
  { method: "POST", pattern: `${sandbox}/fork`, handler: unsupported("fork") },
];

/**
 * Answers one request: configuration check (a missing token secret refuses everything), bearer check on
 * every route, then the route. Every answer, error or not, carries the protocol header.
 */
export async function handleRequest(
  request: Request,
  env: Readonly<Record<string, unknown>>,
): Promise<Response> {
  let response: Response;
  try {
    const config = loadPluginConfig(env);
    await requireBearer(request, config.token, crypto.subtle);
    const url = new URL(request.url);
    const match = findRoute(ROUTES, request.method, url.pathname);
    if (match === undefined)
      throw new NotFoundError({
        message: `no route ${request.method} ${url.pathname}`,
        context: { method: request.method, path: url.pathname },
      });
    response = await match.route.handler({ request, url, params: match.params, env, config });
  } catch (error) {
    response = errorResponse(error);
  }
  return withProtocolHeader(response);
}
