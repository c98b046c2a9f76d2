import type { PluginConfig } from "../config/plugin-config.js";

/** What a route handler receives. */
export interface RouteContext {
  readonly request: Request;
  readonly url: URL;
  /** Path parameters; `rest` holds the remainder matched by a trailing `*rest`, with its leading `/`. */
  readonly params: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, unknown>>;
  readonly config: PluginConfig;
}

/** A route handler. */
export type RouteHandler = (context: RouteContext) => Promise<Response>;

/** A route: method (or `*` for any) and a path pattern of literal, `:param` and trailing `*rest` segments. */
export interface Route {
  readonly method: string;
  readonly pattern: string;
  readonly handler: RouteHandler;
}

function matchPattern(pattern: string, pathname: string): Record<string, string> | undefined {
  const wanted = pattern.split("/").filter(Boolean);
  const actual = pathname.split("/").filter(Boolean);
  const params: Record<string, string> = {};
  for (let index = 0; index < wanted.length; index += 1) {
    const segment = wanted[index] as string;
    if (segment.startsWith("*")) {
      // The remainder keeps its own slashes (including a trailing one) as the client sent them.
      const prefix = `/${actual.slice(0, index).join("/")}`;
      params[segment.slice(1)] = pathname.length > prefix.length ? pathname.slice(prefix.length) : "/";
      return params;
    }
    const value = actual[index];
    if (value === undefined) return undefined;
    if (segment.startsWith(":")) {
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) {
      return undefined;
    }
  }
  return actual.length === wanted.length ? params : undefined;
}

/** The first route matching method and path, with its parameters. */
export function findRoute(routes: readonly Route[], method: string, pathname: string): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== "*" && route.method !== method) continue;
    const params = matchPattern(route.pattern, pathname);
    if (params !== undefined) return { route, params };
  }
  return undefined;
}
