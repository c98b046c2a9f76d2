/**
 * A stand-in for workerd's `ctx.container` runtime object that drives containers on a local container
 * server over HTTP. Workers code only: no Node APIs.
 */

import { ADMIN_PREFIX, CONTAINER_ID_HEADER, CONTAINER_STATE_HEADER, CONTROL_PORT } from "../protocol.js";

/** Messages the `Container` class of `@cloudflare/containers` recognises by substring. */
const NO_INSTANCE_MESSAGE = "there is no container instance that can be provided to this durable object";
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
  getTcpPort(port: number): { fetch(input: string | URL | Request, init?: RequestInit | Request): Promise<Response> };
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

interface RunState {
  running: boolean;
  /** Settles when the server has the container (or refused it); never rejects. */
  starting: Promise<void>;
  exited: Promise<void>;
  finish: (error?: Error) => void;
}

/** Run state per container id; it outlives one Durable Object instance, as a real container does. */
const runs = new Map<string, RunState>();

function settledRun(): RunState {
  return { running: false, starting: Promise.resolve(), exited: Promise.resolve(), finish: () => undefined };
}

/** A run for a container the server already has: running until stopped or reported missing. */
function adoptedRun(): RunState {
  let finish: (error?: Error) => void = () => undefined;
  const exited = new Promise<void>((resolve, reject) => {
    finish = (error) => (error === undefined ? resolve() : reject(error));
  });
  exited.catch(() => undefined);
  return { running: true, starting: Promise.resolve(), exited, finish };
}

/** Creates the runtime object for container `containerId` on the server at `serverUrl`. */
export function createLocalContainerRuntime(serverUrl: string, containerId: string): AdoptingContainerRuntime {
  const base = serverUrl.replace(/\/+$/, "");
  const adminUrl = `${base}${ADMIN_PREFIX}/${encodeURIComponent(containerId)}`;
  const current = (): RunState => runs.get(containerId) ?? settledRun();

  const stop = (run: RunState, signal: string): Promise<void> => {
    run.running = false;
    const done = fetch(`${adminUrl}?signal=${signal}`, { method: "DELETE" }).then(
      async (response) => void (await response.body?.cancel()),
      () => undefined,
    );
    return done.then(() => run.finish());
  };

  const unsupported = (what: string): Promise<void> =>
    Promise.reject(new Error(`${what} is not supported by the local container runtime: local processes share the host network`));

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
      const run: RunState = { running: true, starting: Promise.resolve(), exited, finish };
      run.starting = fetch(adminUrl, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ env: options.env ?? {} }) }).then(
        async (response) => {
          await response.body?.cancel();
          if (response.ok) return;
          run.running = false;
          // At the server's limit, fail at once as Cloudflare does past max_instances, rather than with the
          // no-instance error the Container class keeps retrying.
          run.finish(new Error(response.status === 503 ? `${MAX_INSTANCES_MESSAGE}: the local container server is at its container limit` : `${UNEXPECTED_EXIT_MESSAGE} 1`));
        },
        (error: unknown) => {
          run.running = false;
          run.finish(new Error(`${NO_INSTANCE_MESSAGE}: local container server unreachable (${String(error)})`));
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
          if (!run.running) throw new Error(`${NOT_LISTENING_MESSAGE}: the container is not running`);
          if (port !== CONTROL_PORT) throw new Error(`${NOT_LISTENING_MESSAGE} on port ${port}: the local container runtime serves only port ${CONTROL_PORT}`);
          const original = new Request(input, init);
          const url = new URL(original.url);
          const forwarded = new Request(`${base}${url.pathname}${url.search}`, original);
          forwarded.headers.set(CONTAINER_ID_HEADER, containerId);
          let response: Response;
          try {
            response = await fetch(forwarded);
          } catch (error) {
            run.running = false;
            run.finish(new Error(`${UNEXPECTED_EXIT_MESSAGE} 1 (local container server unreachable: ${String(error)})`));
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
        const response = await fetch(`${base}${ADMIN_PREFIX}`);
        const listed = (await response.json()) as { containers?: unknown };
        if (Array.isArray(listed.containers) && listed.containers.includes(containerId) && !runs.has(containerId)) runs.set(containerId, adoptedRun());
      } catch {
        // An unreachable server has no container to adopt; start() reports it when asked to run one.
      }
    },
    interceptOutboundHttp: () => unsupported("Outbound HTTP interception"),
    interceptOutboundHttps: () => unsupported("Outbound HTTPS interception"),
    interceptAllOutboundHttp: () => unsupported("Outbound HTTP interception"),
  };
}
