/** What {@link matchRoute} needs of a route: a method (`*` for any) and a path pattern. */
export interface RoutePattern {
  readonly method: string;
  /** Literal segments, `:name` segments (one URL-decoded segment) and a trailing `*name` (the remainder). */
  readonly pattern: string;
}

/** The outcome of {@link matchRoute}. */
export type RouteMatch<R extends RoutePattern> =
  | { readonly kind: "matched"; readonly route: R; readonly params: Record<string, string> }
  /** The path matched, but not with this method; `allowed` lists the methods that would. */
  | { readonly kind: "method_not_allowed"; readonly allowed: readonly string[] }
  | { readonly kind: "not_found" };

/** The parameters `pattern` gives `pathname`, or undefined when it does not match. */
export function matchPattern(
  pattern: string,
  pathname: string,
): Record<string, string> | undefined {
  const wanted = pattern.split("/").filter(Boolean);
  const actual = pathname.split("/").filter(Boolean);
  const params: Record<string, string> = {};
  for (let index = 0; index < wanted.length; index += 1) {
    const segment = wanted[index] as string;
    if (segment.startsWith("*")) {
      // The remainder keeps its own slashes (including a trailing one) as the client sent them.
      const prefix = `/${actual.slice(0, index).join("/")}`;
      params[segment.slice(1)] =
        pathname.length > prefix.length ? pathname.slice(prefix.length) : "/";
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

/**
 * The first of `routes` whose method and pattern match, with its parameters. List a literal segment
 * before a parameter in the same place (`work/poll` before `work/:work_id`).
 */
export function matchRoute<R extends RoutePattern>(
  routes: readonly R[],
  method: string,
  pathname: string,
): RouteMatch<R> {
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPattern(route.pattern, pathname);
    if (params === undefined) continue;
    if (route.method === "*" || route.method === method) return { kind: "matched", route, params };
    if (!allowed.includes(route.method)) allowed.push(route.method);
  }
  return allowed.length > 0 ? { kind: "method_not_allowed", allowed } : { kind: "not_found" };
}
