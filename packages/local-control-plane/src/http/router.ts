import type { IncomingMessage, ServerResponse } from "node:http";
import { createError } from "@open-managed-agents/runtime-resource-contract";

/** What a route handler gets. */
export interface RouteContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  /** The bearer credential (`Authorization: Bearer` or `X-Api-Key`), or null. */
  readonly token: string | null;
}

/** One route: method, path pattern with `:name` segments, handler. */
export interface Route {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly handler: (context: RouteContext) => Promise<void> | void;
}

interface CompiledRoute extends Route {
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

/** Matches requests against `routes` in order: list a literal segment before a parameter in the same place (`work/poll` before `work/:work_id`). */
export function createRouter(routes: readonly Route[]) {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
      names.push(name);
      return "([^/]+)";
    });
    return { ...route, pattern: new RegExp(`^${source}$`), names };
  });
  return {
    match(method: string, pathname: string): { route: CompiledRoute; params: Record<string, string> } {
      let pathMatched = false;
      for (const route of compiled) {
        const found = route.pattern.exec(pathname);
        if (!found) continue;
        pathMatched = true;
        if (route.method !== method) continue;
        const params: Record<string, string> = {};
        route.names.forEach((name, index) => {
          params[name] = decodeURIComponent(found[index + 1]!);
        });
        return { route, params };
      }
      throw createError(pathMatched ? "invalid_request" : "not_found", { message: pathMatched ? `${method} is not allowed on ${pathname}` : `no route ${method} ${pathname}`, context: { method } });
    },
  };
}

/** The bearer credential of a request. */
export function bearerToken(request: IncomingMessage): string | null {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string" && authorization.startsWith("Bearer ")) return authorization.slice("Bearer ".length).trim() || null;
  const apiKey = request.headers["x-api-key"];
  return typeof apiKey === "string" && apiKey !== "" ? apiKey : null;
}
