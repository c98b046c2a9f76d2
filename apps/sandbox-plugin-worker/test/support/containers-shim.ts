/**
 * `@cloudflare/containers` for the workerd tests. It is the local container runtime of
 * `@open-managed-agents/local-container` (the real `Container` class over a local implementation of the
 * container control API), wrapped with two test-only additions:
 *
 * - a start-failure hook: a sandbox created with env `OMA_TEST_START_FAILURE=capacity|image|crash` gets an
 *   instance that fails to start the way workerd reports it (the runtime's `monitor()` rejects with the
 *   platform's message), so the plugin's mapping of real start failures can be exercised;
 * - an application port: port 8080 of a running instance is served by a local HTTP server, standing in
 *   for a process listening inside the container (the local runtime serves only the control port).
 */
import {
  Container as LocalContainer,
  type LocalContainerRuntime,
  createLocalContainerRuntime,
} from "@open-managed-agents/local-container/containers-shim";

export * from "@open-managed-agents/local-container/containers-shim";

/** Binding with the local container server's URL. */
export const TEST_CONTAINER_URL_BINDING = "OMA_TEST_CONTAINER_URL";
/** Binding with the URL of the server that stands in for port 8080 inside instances. */
export const TEST_APP_URL_BINDING = "OMA_TEST_APP_URL";
/** Start env variable that selects a start failure. */
export const START_FAILURE_ENV = "OMA_TEST_START_FAILURE";
/** The container port the application server stands in for. */
export const APP_PORT = 8080;

/** Messages workerd and `@cloudflare/containers` 0.3.7 raise for each failure. */
const START_FAILURES: Readonly<Record<string, string>> = {
  capacity: "there is no container instance that can be provided to this durable object",
  image: "no such image: registry.cloudflare.com/example/missing:1",
  crash: "container exited with unexpected exit code: 1",
};

type Fetch = (input: string | URL | Request, init?: RequestInit | Request) => Promise<Response>;

function withTestHooks(inner: LocalContainerRuntime, appUrl: string): LocalContainerRuntime {
  let failure: Error | undefined;
  const base = appUrl.replace(/\/+$/, "");
  return {
    get running() {
      return failure === undefined && inner.running;
    },
    start(options) {
      const mode = options?.env?.[START_FAILURE_ENV];
      const message = mode === undefined ? undefined : START_FAILURES[mode];
      if (message !== undefined) {
        failure = new Error(message);
        return;
      }
      failure = undefined;
      inner.start(options);
    },
    monitor() {
      if (failure === undefined) return inner.monitor();
      const failed = Promise.reject(failure);
      // The Container class awaits it later; this keeps an early failure from counting as unhandled.
      failed.catch(() => undefined);
      return failed;
    },
    async destroy() {
      if (failure === undefined) await inner.destroy();
      failure = undefined;
    },
    signal: (signo) => inner.signal(signo),
    getTcpPort(port) {
      const innerPort = inner.getTcpPort(port);
      const fetch: Fetch = async (input, init) => {
        if (failure !== undefined)
          throw new Error(`the container is not listening: ${failure.message}`);
        if (port !== APP_PORT) return innerPort.fetch(input, init);
        if (!inner.running)
          throw new Error("the container is not listening: the container is not running");
        const original = new Request(input, init);
        const url = new URL(original.url);
        return globalThis.fetch(new Request(`${base}${url.pathname}${url.search}`, original));
      };
      return { fetch };
    },
    setInactivityTimeout: (durationMs) => inner.setInactivityTimeout(durationMs),
    interceptOutboundHttp: (host, fetcher) => inner.interceptOutboundHttp(host, fetcher),
    interceptOutboundHttps: (host, fetcher) => inner.interceptOutboundHttps(host, fetcher),
    interceptAllOutboundHttp: (fetcher) => inner.interceptAllOutboundHttp(fetcher),
  };
}

type LocalArgs<Env> = ConstructorParameters<typeof LocalContainer<Env>>;

/** `Container` over the local container server, with the test hooks above. */
export class Container<Env = unknown> extends LocalContainer<Env> {
  constructor(...args: LocalArgs<Env>) {
    const ctx = args[0] as unknown as { id: { toString(): string } };
    const env = args[1] as unknown as Record<string, unknown>;
    const serverUrl = env[TEST_CONTAINER_URL_BINDING];
    const appUrl = env[TEST_APP_URL_BINDING];
    if (typeof serverUrl !== "string" || typeof appUrl !== "string")
      throw new Error(`${TEST_CONTAINER_URL_BINDING} and ${TEST_APP_URL_BINDING} must be bound`);
    Object.defineProperty(ctx, "container", {
      value: withTestHooks(
        createLocalContainerRuntime(serverUrl, ctx.id.toString(), {
          controlToken: String(env.OMA_TEST_CONTAINER_TOKEN),
        }),
        appUrl,
      ),
      configurable: true,
      enumerable: true,
    });
    super(...args);
  }
}
