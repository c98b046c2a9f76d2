import { ProxyAgent, fetch as undiciFetch } from "undici";

/**
 * A `fetch` that sends every call through the proxy the sandbox names for the API origin's scheme
 * (`HTTP_PROXY` / `HTTPS_PROXY`, either case), or undefined when it names none (the SDK then uses the global
 * `fetch`, which ignores those variables). `NO_PROXY` is not applied: in a sandbox whose network is its own,
 * the proxy is the only way out, and a local control plane on the host's loopback address is reachable
 * only through it. Plain HTTP goes to the proxy as absolute-form requests, HTTPS through `CONNECT`.
 */
export function proxyFetchFor(baseURL: string, env: Readonly<Record<string, string | undefined>>): typeof fetch | undefined {
  const secure = new URL(baseURL).protocol === "https:";
  const proxy = secure ? env.HTTPS_PROXY || env.https_proxy : env.HTTP_PROXY || env.http_proxy;
  if (!proxy) return undefined;
  const dispatcher = new ProxyAgent({ uri: proxy, proxyTunnel: secure });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
