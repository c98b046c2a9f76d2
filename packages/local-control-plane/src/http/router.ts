import type { IncomingMessage, ServerResponse } from "node:http";
import { createError } from "@open-managed-agents/runtime-resource-contract";
import { matchRoute } from "@open-managed-agents/runtime-utils/http";

/** What a route handler gets. */
export interface RouteContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  /** The bearer credential (`Authorization: Bearer` or `X-Api-Key`), or null. */
  readonly token: string | null;
}

/** The path parameter `name` of the matched route; a route reads only the parameters its pattern names. */
export function pathParam(context: RouteContext, name: string): string {
  const value = context.params[name];
  if (value === undefined)
    throw createError("internal", { message: `the route has no path parameter ${name}` });
  return value;
}

/** One route: method, path pattern with `:name` segments, handler. */
export interface Route {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly handler: (context: RouteContext) => Promise<void> | void;
}

/** Matches requests against `routes` in order: list a literal segment before a parameter in the same place (`work/poll` before `work/:work_id`). */
export function createRouter(routes: readonly Route[]) {
  const patterns = routes.map((route) => ({ method: route.method, pattern: route.path, route }));
  return {
    match(method: string, pathname: string): { route: Route; params: Record<string, string> } {
      const found = matchRoute(patterns, method, pathname);
      if (found.kind === "matched") return { route: found.route.route, params: found.params };
      const pathMatched = found.kind === "method_not_allowed";
      throw createError(pathMatched ? "invalid_request" : "not_found", {
        message: pathMatched
          ? `${method} is not allowed on ${pathname}`
          : `no route ${method} ${pathname}`,
        context: { method },
      });
    },
  };
}

/** The bearer credential of a request. */
export function bearerToken(request: IncomingMessage): string | null {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string" && authorization.startsWith("Bearer "))
    return authorization.slice("Bearer ".length).trim() || null;
  const apiKey = request.headers["x-api-key"];
  return typeof apiKey === "string" && apiKey !== "" ? apiKey : null;
}
