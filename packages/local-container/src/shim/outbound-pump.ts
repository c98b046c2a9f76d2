/**
 * The Worker's half of Worker-routed egress in the local container runtime: collects the requests a
 * container sent to its proxy from the local container server, hands each to the fetcher the `Container`
 * class registered (workerd's outbound interception), and posts the answer back. Workers code only.
 */
import type { OutboundJob } from "../protocol.js";

/** What `interceptOutboundHttp(s)` and `interceptAllOutboundHttp` receive: a `ContainerProxy` fetcher. */
export interface OutboundFetcher {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

/** The fetchers registered for one scheme of one container. */
export interface SchemeInterceptions {
  all: OutboundFetcher | undefined;
  readonly byHost: Map<string, OutboundFetcher>;
}

/** The fetchers registered for one container: HTTP and HTTPS apart, as workerd keeps them. */
export interface Interceptions {
  readonly http: SchemeInterceptions;
  readonly https: SchemeInterceptions;
}

export function createInterceptions(): Interceptions {
  return {
    http: { all: undefined, byHost: new Map() },
    https: { all: undefined, byHost: new Map() },
  };
}

/** Registers `fetcher` for `host` and `scheme` (`*` = every host, as `interceptOutboundHttps('*')` means). */
export function registerInterception(
  interceptions: Interceptions,
  scheme: "http" | "https",
  host: string,
  fetcher: unknown,
): void {
  if (typeof (fetcher as OutboundFetcher | null)?.fetch !== "function")
    throw new TypeError("outbound interception needs a fetcher with fetch()");
  const registry = interceptions[scheme];
  if (host === "*") registry.all = fetcher as OutboundFetcher;
  else registry.byHost.set(host.toLowerCase(), fetcher as OutboundFetcher);
}

/** The hosts HTTPS is intercepted for (`*` = all): the proxy terminates TLS only for these. */
export function httpsHosts(interceptions: Interceptions): string[] {
  return [
    ...(interceptions.https.all === undefined ? [] : ["*"]),
    ...interceptions.https.byHost.keys(),
  ];
}

/** The answer a container gets when no handler takes its request: it has no internet of its own. */
function noRoute(url: string): Response {
  let host = "";
  try {
    host = new URL(url).host;
  } catch {
    // Answered the same way.
  }
  return new Response(`no outbound handler for ${host}: the container has no internet\n`, {
    status: 502,
    headers: { "content-type": "text/plain" },
  });
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.byteLength; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
}

/** Runs one collected request through the registered fetcher (per host first, then the catch-all). */
async function dispatch(interceptions: Interceptions, job: OutboundJob): Promise<Response> {
  let url: URL;
  try {
    url = new URL(job.url);
  } catch {
    return new Response("bad request URL\n", { status: 400 });
  }
  // An https URL only ever comes from a host the HTTPS registrations named; it never falls to HTTP ones.
  const registry = url.protocol === "https:" ? interceptions.https : interceptions.http;
  const hostname = url.hostname.toLowerCase();
  const fetcher = registry.byHost.get(hostname) ?? registry.all;
  if (fetcher === undefined) return noRoute(job.url);
  const bodyless = job.method === "GET" || job.method === "HEAD";
  return fetcher.fetch(
    new Request(job.url, {
      method: job.method,
      headers: job.headers,
      ...(bodyless || job.body === "" ? {} : { body: fromBase64(job.body) }),
    }),
  );
}

/**
 * Collects and answers the container's requests at `outboundUrl` (through `serverFetch`, which adds the
 * control token) until `active()` turns false or the
 * server stops knowing the container. Never rejects.
 */
export async function pumpOutbound(
  serverFetch: (input: string, init?: RequestInit) => Promise<Response>,
  outboundUrl: string,
  interceptions: Interceptions,
  active: () => boolean,
): Promise<void> {
  while (active()) {
    let job: OutboundJob;
    try {
      const next = await serverFetch(outboundUrl);
      if (next.status === 204) continue;
      if (next.status !== 200) {
        await next.body?.cancel();
        return;
      }
      job = (await next.json()) as OutboundJob;
    } catch {
      return;
    }
    let answer: { status: number; headers: Record<string, string>; body: string };
    try {
      const response = await dispatch(interceptions, job);
      answer = {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: toBase64(new Uint8Array(await response.arrayBuffer())),
      };
    } catch (error) {
      answer = {
        status: 502,
        headers: { "content-type": "text/plain" },
        body: btoa(`outbound handler failed: ${error instanceof Error ? error.name : "error"}\n`),
      };
    }
    try {
      const posted = await serverFetch(`${outboundUrl}/${encodeURIComponent(job.id)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(answer),
      });
      await posted.body?.cancel();
    } catch {
      return;
    }
  }
}
