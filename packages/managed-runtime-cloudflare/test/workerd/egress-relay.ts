/**
 * Outbound interception for the local container runtime, which refuses it. workerd hands a container's
 * intercepted traffic to the fetcher the `Container` class registers; here the registered fetchers are
 * recorded per container so a test can send a request exactly where the platform would send the
 * container's own request: through `ContainerProxy` into the application's outbound handlers.
 */
import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";

interface FetcherLike {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

interface Interception {
  all: FetcherLike | null;
  httpsAll: FetcherLike | null;
  readonly byHost: Map<string, FetcherLike>;
}

const interceptions = new Map<string, Interception>();

function entry(containerId: string): Interception {
  let found = interceptions.get(containerId);
  if (!found) {
    found = { all: null, httpsAll: null, byHost: new Map() };
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
  const fetcher = found?.byHost.get(`${url.protocol}//${url.hostname}`) ?? (url.protocol === "https:" ? found?.httpsAll : found?.all) ?? null;
  if (!fetcher) return new Response("no interception registered; the container has no route out", { status: 599 });
  return fetcher.fetch(request);
}

/** True when a catch-all HTTP interception is registered for the container. */
export function interceptsAll(containerId: string): boolean {
  return interceptions.get(containerId)?.all != null;
}

export function withOutboundRelay(runtime: LocalContainerRuntime, containerId: string): LocalContainerRuntime {
  return {
    get running() {
      return runtime.running;
    },
    start: (options) => runtime.start(options),
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
    },
  };
}
