/**
 * Outbound interception for the local container runtime, which refuses it. workerd hands a container's
 * intercepted traffic to the fetcher the `Container` class registers; here the registered fetchers are
 * recorded per container, and the container's processes get an `http_proxy` pointing at a relay
 * (relay-server.ts) whose queued requests the Durable Object collects and sends through that fetcher,
 * in its own I/O context. Tests can also send a request straight to the fetcher (`sendFromContainer`).
 */
import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";

interface FetcherLike {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

interface Interception {
  all: FetcherLike | null;
  pump: number;
  httpsAll: FetcherLike | null;
  readonly byHost: Map<string, FetcherLike>;
}

const interceptions = new Map<string, Interception>();

function entry(containerId: string): Interception {
  let found = interceptions.get(containerId);
  if (!found) {
    found = { all: null, pump: 0, httpsAll: null, byHost: new Map() };
    interceptions.set(containerId, found);
  }
  return found;
}

/**
 * Sends `request` as if the container had made it: to the per-host fetcher, else the catch-all one for
 * its protocol. With no interception registered the request is refused, as a container without
 * internet access would see it.
 */
export async function sendFromContainer(containerId: string, request: Request): Promise<Response> {
  const found = interceptions.get(containerId);
  const url = new URL(request.url);
  const fetcher =
    found?.byHost.get(`${url.protocol}//${url.hostname}`) ??
    (url.protocol === "https:" ? found?.httpsAll : found?.all) ??
    null;
  if (!fetcher)
    return new Response("no interception registered; the container has no route out", {
      status: 599,
    });
  return fetcher.fetch(request);
}

/** True when a catch-all HTTP interception is registered for the container. */
export function interceptsAll(containerId: string): boolean {
  return interceptions.get(containerId)?.all != null;
}

interface RelayJob {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.byteLength; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

/** Collects the container's proxied requests from the relay until the container stops or a newer pump starts. */
async function pump(
  runtime: LocalContainerRuntime,
  containerId: string,
  relayUrl: string,
  generation: number,
): Promise<void> {
  const state = entry(containerId);
  while (runtime.running && state.pump === generation) {
    let job: RelayJob;
    try {
      const next = await fetch(
        `${relayUrl}/__relay/next?container=${encodeURIComponent(containerId)}`,
      );
      if (next.status !== 200) {
        await next.body?.cancel();
        continue;
      }
      job = (await next.json()) as RelayJob;
    } catch {
      return;
    }
    let answer: { status: number; headers: Record<string, string>; body: string };
    try {
      const body =
        job.body === "" || job.method === "GET" || job.method === "HEAD"
          ? undefined
          : Uint8Array.from(atob(job.body), (character) => character.charCodeAt(0));
      const response = await sendFromContainer(
        containerId,
        new Request(job.url, { method: job.method, headers: job.headers, body }),
      );
      answer = {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: toBase64(new Uint8Array(await response.arrayBuffer())),
      };
    } catch (error) {
      answer = { status: 502, headers: {}, body: btoa(String(error)) };
    }
    try {
      const posted = await fetch(`${relayUrl}/__relay/answer/${job.id}`, {
        method: "POST",
        body: JSON.stringify(answer),
      });
      await posted.body?.cancel();
    } catch {
      return;
    }
  }
}

/** The proxy URL of a container's processes: the container id rides as the proxy user name. */
function proxyUrl(relayUrl: string, containerId: string): string {
  const url = new URL(relayUrl);
  url.username = containerId;
  url.password = "relay";
  return url.toString().replace(/\/$/, "");
}

export function withOutboundRelay(
  runtime: LocalContainerRuntime,
  containerId: string,
  relayUrl: string | undefined,
): LocalContainerRuntime {
  const startPump = (): void => {
    if (!relayUrl) return;
    const state = entry(containerId);
    state.pump += 1;
    void pump(runtime, containerId, relayUrl, state.pump).catch(() => undefined);
  };
  return {
    get running() {
      return runtime.running;
    },
    start: (options) => {
      const proxy = relayUrl ? proxyUrl(relayUrl, containerId) : undefined;
      runtime.start(
        proxy
          ? { ...options, env: { ...options?.env, http_proxy: proxy, HTTP_PROXY: proxy } }
          : options,
      );
      if (entry(containerId).all) startPump();
    },
    monitor: () => runtime.monitor(),
    destroy: () => runtime.destroy(),
    signal: (signo) => runtime.signal(signo),
    getTcpPort: (port) => runtime.getTcpPort(port),
    setInactivityTimeout: (ms) => runtime.setInactivityTimeout(ms),
    async interceptOutboundHttp(host, fetcher) {
      entry(containerId).byHost.set(`http://${host}`, fetcher as FetcherLike);
    },
    async interceptOutboundHttps(host, fetcher) {
      if (host === "*") entry(containerId).httpsAll = fetcher as FetcherLike;
      else entry(containerId).byHost.set(`https://${host}`, fetcher as FetcherLike);
    },
    async interceptAllOutboundHttp(fetcher) {
      entry(containerId).all = fetcher as FetcherLike;
      if (runtime.running) startPump();
    },
  };
}
