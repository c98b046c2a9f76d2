import { matchRoute } from "@open-managed-agents/runtime-utils/http";
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

/** The first route matching method and path, with its parameters. */
export function findRoute(
  routes: readonly Route[],
  method: string,
  pathname: string,
): { route: Route; params: Record<string, string> } | undefined {
  const match = matchRoute(routes, method, pathname);
  return match.kind === "matched" ? { route: match.route, params: match.params } : undefined;
}
