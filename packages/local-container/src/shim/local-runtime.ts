/**
 * A stand-in for workerd's `ctx.container` runtime object that drives containers on a local container
 * server over HTTP. Workers code only: no Node APIs.
 */

import {
  ADMIN_PREFIX,
  CONTAINER_ID_HEADER,
  CONTAINER_STATE_HEADER,
  CONTROL_PORT,
  CONTROL_TOKEN_HEADER,
  OUTBOUND_HTTPS_PATH,
  OUTBOUND_PATH,
} from "../protocol.js";
import {
  type Interceptions,
  createInterceptions,
  httpsHosts,
  pumpOutbound,
  registerInterception,
} from "./outbound-pump.js";

/** Messages the `Container` class of `@cloudflare/containers` recognises by substring. */
const NO_INSTANCE_MESSAGE =
  "there is no container instance that can be provided to this durable object";
const NOT_LISTENING_MESSAGE = "the container is not listening";
const UNEXPECTED_EXIT_MESSAGE = "container exited with unexpected exit code:";
/** What Cloudflare reports past `max_instances`; the bridge's warm pool turns it into 503 `capacity_exceeded`. */
const MAX_INSTANCES_MESSAGE = "Maximum number of running container instances exceeded";

/** What `Container.start` passes to the runtime. */
export interface RuntimeStartOptions {
  env?: Record<string, string>;
  entrypoint?: string[];
  enableInternet?: boolean;
  labels?: Record<string, string>;
}

/** The subset of workerd's container runtime that `@cloudflare/containers` and the Sandbox SDK use. */
export interface LocalContainerRuntime {
  readonly running: boolean;
  start(options?: RuntimeStartOptions): void;
  monitor(): Promise<void>;
  destroy(): Promise<void>;
  signal(signo: number): void;
  getTcpPort(port: number): {
    fetch(input: string | URL | Request, init?: RequestInit | Request): Promise<Response>;
  };
  setInactivityTimeout(durationMs: number): Promise<void>;
  interceptOutboundHttp(host: string, fetcher: unknown): Promise<void>;
  interceptOutboundHttps(host: string, fetcher: unknown): Promise<void>;
  interceptAllOutboundHttp(fetcher: unknown): Promise<void>;
}

/** The local runtime object: workerd's interface plus {@link AdoptingContainerRuntime.adopt}. */
export interface AdoptingContainerRuntime extends LocalContainerRuntime {
  /**
   * Learns whether the server still runs this container (after a workerd restart this process has no run
   * state, while a real container outlives its Worker). Not part of workerd's interface: the shim calls it
   * inside `blockConcurrencyWhile` before the Durable Object serves anything.
   */
  adopt(): Promise<void>;
}

/** Options of {@link createLocalContainerRuntime}. */
export interface LocalContainerRuntimeOptions {
  /**
   * `worker` (the default): a container started with `enableInternet: false`, or after outbound
   * interception was registered, has no network but a proxy whose every HTTP request the registered
   * fetcher (the Worker's outbound handlers) answers, and HTTPS to the hosts `interceptOutboundHttps`
   * named is decrypted with the local server's CA (which the container trusts, at Cloudflare's path)
   * and answered the same way; any other HTTPS (`CONNECT`) is refused. `refuse`: containers
   * get the server's network (`none` unless it runs `host-unsafe`) and every interception call is refused.
   */
  readonly outbound?: "worker" | "refuse";
  /** The server's control token (`server.controlToken`); every call carries it. Without it the server refuses every call. */
  readonly controlToken?: string;
}

interface RunState {
  running: boolean;
  /** Whether the container's outbound HTTP goes to its Worker. */
  routed?: boolean;
  /** Whether a pump collects its outbound requests. */
  pumping?: boolean;
  /** Settles when the server has the container (or refused it); never rejects. */
  starting: Promise<void>;
  exited: Promise<void>;
  finish: (error?: Error) => void;
}

/** Run state per container id; it outlives one Durable Object instance, as a real container does. */
const runs = new Map<string, RunState>();
/** Registered outbound interception per container id, kept across restarts as workerd keeps it per container. */
const intercepted = new Map<string, Interceptions>();

/**
 * The container ids the runtime holds state for: a run (started and not yet destroyed or stopped) and
 * registered outbound interception. Both are module state, shared by every Durable Object of the isolate,
 * so what a destroyed container leaves here would stay for the life of workerd. For tests and diagnostics.
 */
export function heldContainerState(): { runs: string[]; interceptions: string[] } {
  return { runs: [...runs.keys()], interceptions: [...intercepted.keys()] };
}

function settledRun(): RunState {
  return {
    running: false,
    starting: Promise.resolve(),
    exited: Promise.resolve(),
    finish: () => undefined,
  };
}

/** A run for a container the server already has: running until stopped or reported missing. */
function adoptedRun(routed: boolean): RunState {
  let finish: (error?: Error) => void = () => undefined;
  const exited = new Promise<void>((resolve, reject) => {
    finish = (error) => (error === undefined ? resolve() : reject(error));
  });
  exited.catch(() => undefined);
  return { running: true, routed, starting: Promise.resolve(), exited, finish };
}

/** Creates the runtime object for container `containerId` on the server at `serverUrl`. */
export function createLocalContainerRuntime(
  serverUrl: string,
  containerId: string,
  options: LocalContainerRuntimeOptions = {},
): AdoptingContainerRuntime {
  const base = serverUrl.replace(/\/+$/, "");
  const adminUrl = `${base}${ADMIN_PREFIX}/${encodeURIComponent(containerId)}`;
  const current = (): RunState => runs.get(containerId) ?? settledRun();
  const routing = (options.outbound ?? "worker") === "worker";
  /** `fetch` to the server, with the control token on every call. */
  const serverFetch = (input: string | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (options.controlToken !== undefined)
      request.headers.set(CONTROL_TOKEN_HEADER, `Bearer ${options.controlToken}`);
    return fetch(request);
  };
  const interceptionsOf = (): Interceptions => {
    let found = intercepted.get(containerId);
    if (found === undefined) {
      found = createInterceptions();
      intercepted.set(containerId, found);
    }
    return found;
  };
  /** Checks and registers an interception call. */
  const intercept = async (
    what: string,
    scheme: "http" | "https",
    host: string,
    fetcher: unknown,
  ): Promise<void> => {
    if (!routing) return unsupported(what);
    const run = current();
    // A container already running on the host network could go around any handler: fail closed.
    if (run.running && run.routed !== true) {
      throw new Error(
        `${what} needs a container started with enableInternet: false or with interception registered first: this one started without Worker-routed egress (on the host network, or on none)`,
      );
    }
    registerInterception(interceptionsOf(), scheme, host, fetcher);
    if (scheme === "https" && run.running) await announceHttps(run);
    // An adopted container (after a workerd restart) gets its pump when the Container class re-registers.
    if (run.running && run.routed === true && run.pumping !== true) pump(run);
  };
  /** Tells the server of a running container which hosts' HTTPS to decrypt; one that has not started learns them at start. */
  const announceHttps = async (run: RunState): Promise<void> => {
    await run.starting;
    if (!run.running) return;
    // A server that did not take the hosts (gone, or lost the container) keeps refusing CONNECT: fail closed.
    await serverFetch(`${adminUrl}/${OUTBOUND_PATH}/${OUTBOUND_HTTPS_PATH}`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ hosts: httpsHosts(interceptionsOf()) }),
    }).then(
      async (response) => void (await response.body?.cancel()),
      () => undefined,
    );
  };
  const pump = (run: RunState): void => {
    run.pumping = true;
    void pumpOutbound(
      serverFetch,
      `${adminUrl}/${OUTBOUND_PATH}`,
      interceptionsOf(),
      () => runs.get(containerId) === run && run.running,
    ).finally(() => {
      run.pumping = false;
    });
  };

  const stop = (run: RunState, signal: string): Promise<void> => {
    run.running = false;
    const done = serverFetch(`${adminUrl}?signal=${signal}`, { method: "DELETE" }).then(
      async (response) => void (await response.body?.cancel()),
      () => undefined,
    );
    return done.then(() => {
      run.finish();
      // An ended run answers as a settled one does; keeping it would hold it for the life of the isolate.
      if (runs.get(containerId) === run) runs.delete(containerId);
    });
  };

  const unsupported = (what: string): Promise<void> =>
    Promise.reject(
      new Error(`${what} is not supported by this local container runtime (outbound: "refuse")`),
    );

  return {
    get running() {
      return current().running;
    },
    start(options = {}) {
      if (current().running) return;
      let finish: (error?: Error) => void = () => undefined;
      const exited = new Promise<void>((resolve, reject) => {
        finish = (error) => (error === undefined ? resolve() : reject(error));
      });
      // The Container class attaches its own handlers; this one only keeps an early failure from being unhandled.
      exited.catch(() => undefined);
      const routed = routing && (options.enableInternet === false || intercepted.has(containerId));
      const run: RunState = { running: true, routed, starting: Promise.resolve(), exited, finish };
      const body = {
        env: options.env ?? {},
        ...(routed ? { outbound: "worker", interceptHttps: httpsHosts(interceptionsOf()) } : {}),
      };
      run.starting = serverFetch(adminUrl, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }).then(
        async (response) => {
          await response.body?.cancel();
          if (response.ok) {
            if (routed) pump(run);
            return;
          }
          run.running = false;
          // At the server's limit, fail at once as Cloudflare does past max_instances, rather than with the
          // no-instance error the Container class keeps retrying.
          run.finish(
            new Error(
              response.status === 503
                ? `${MAX_INSTANCES_MESSAGE}: the local container server is at its container limit`
                : `${UNEXPECTED_EXIT_MESSAGE} 1`,
            ),
          );
        },
        (error: unknown) => {
          run.running = false;
          run.finish(
            new Error(
              `${NO_INSTANCE_MESSAGE}: local container server unreachable (${String(error)})`,
            ),
          );
        },
      );
      runs.set(containerId, run);
    },
    monitor() {
      return current().exited;
    },
    async destroy() {
      const run = current();
      await run.starting;
      await stop(run, "SIGKILL");
      runs.delete(containerId);
      intercepted.delete(containerId);
    },
    signal(signo) {
      const run = current();
      void run.starting.then(() => stop(run, String(signo)));
    },
    getTcpPort(port) {
      return {
        async fetch(input, init) {
          const run = current();
          await run.starting;
          if (!run.running)
            throw new Error(`${NOT_LISTENING_MESSAGE}: the container is not running`);
          if (port !== CONTROL_PORT)
            throw new Error(
              `${NOT_LISTENING_MESSAGE} on port ${port}: the local container runtime serves only port ${CONTROL_PORT}`,
            );
          const original = new Request(input, init);
          const url = new URL(original.url);
          const forwarded = new Request(`${base}${url.pathname}${url.search}`, original);
          forwarded.headers.set(CONTAINER_ID_HEADER, containerId);
          let response: Response;
          try {
            response = await serverFetch(forwarded);
          } catch (error) {
            // The caller gave up (its health-check deadline passed while a start waited under load): the
            // container still runs on the server, so it is not reported as exited, which would leave it
            // running with nothing that stops it.
            if (original.signal.aborted) throw error;
            run.running = false;
            run.finish(
              new Error(
                `${UNEXPECTED_EXIT_MESSAGE} 1 (local container server unreachable: ${String(error)})`,
              ),
            );
            throw new Error(`${NOT_LISTENING_MESSAGE}: ${String(error)}`);
          }
          // The server lost the container (for example it restarted): report the container as exited.
          if (response.headers.get(CONTAINER_STATE_HEADER) === "missing") {
            run.running = false;
            run.finish(new Error(`${UNEXPECTED_EXIT_MESSAGE} 137`));
          }
          return response;
        },
      };
    },
    async setInactivityTimeout() {
      // Local containers stop only when the Container class or the server tells them to.
    },
    async adopt() {
      if (runs.has(containerId)) return;
      try {
        const response = await serverFetch(`${base}${ADMIN_PREFIX}`);
        const listed = (await response.json()) as { containers?: unknown; routed?: unknown };
        if (
          Array.isArray(listed.containers) &&
          listed.containers.includes(containerId) &&
          !runs.has(containerId)
        ) {
          runs.set(
            containerId,
            adoptedRun(
              routing && Array.isArray(listed.routed) && listed.routed.includes(containerId),
            ),
          );
        }
      } catch {
        // An unreachable server has no container to adopt; start() reports it when asked to run one.
      }
    },
    interceptOutboundHttp: (host, fetcher) =>
      intercept("Outbound HTTP interception", "http", host, fetcher),
    interceptOutboundHttps: (host, fetcher) =>
      intercept("Outbound HTTPS interception", "https", host, fetcher),
    interceptAllOutboundHttp: (fetcher) =>
      intercept("Outbound HTTP interception", "http", "*", fetcher),
  };
}
