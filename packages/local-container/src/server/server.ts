import { mkdir } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  ADMIN_PREFIX,
  CONTAINER_ID_HEADER,
  CONTAINER_STATE_HEADER,
  OUTBOUND_HTTPS_PATH,
  OUTBOUND_PATH,
} from "../protocol.js";
import {
  CONTAINER_ID_PATTERN,
  type ContainerRegistry,
  createContainerRegistry,
} from "./container-registry.js";
import { removeOrphanedContainers } from "./orphaned-containers.js";
import {
  assertConfinementAvailable,
  assertContainerCgroupsAvailable,
} from "@open-managed-agents/local-confinement";
import {
  type ConfinementMode,
  type LocalContainerLimits,
  type LocalContainerNetwork,
  type LocalContainerServerOptions,
  confinementNetworkOf,
  resolveServerOptions,
} from "./options.js";
import { assertBunAvailable } from "./image-env.js";
import { COLLECT_WAIT_MS, createOutboundRelay, outboundAnswerSchema } from "./outbound-relay.js";
import { readJson } from "./request-body.js";
import { containerStartRequestSchema, httpsHostsRequestSchema } from "./request-schemas.js";
import { findRoute } from "./router.js";
import { ControlApiError } from "./control-api-error.js";
import { CORS_HEADERS, now, sendError, sendJson, sendText } from "./control-api-responses.js";
import { WEBSOCKET_PATHS, createWebSocketAdapter } from "./ws-adapter.js";
import { assertControlToken, createControlToken } from "./control-token.js";

/** A running local container server. */
export interface LocalContainerServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /**
   * The secret every call must carry (`X-Oma-Control-Token: Bearer <token>`): give it to the stack only,
   * never to a container.
   */
  readonly controlToken: string;
  readonly limits: LocalContainerLimits;
  /** The confinement every container of this server runs in (`"bubblewrap"` unless `"unconfined-unsafe"` was asked for). */
  readonly confinement: ConfinementMode;
  /** Network of the containers: `none` (their own loopback only) unless `host-unsafe` was asked for or they are unconfined. */
  readonly network: LocalContainerNetwork;
  /** The live containers, for tests and tooling. */
  readonly containers: Pick<ContainerRegistry, "ensure" | "get" | "list" | "destroy">;
  /** Stops listening, kills every container's processes and removes their trees. */
  close(): Promise<void>;
}

/**
 * How long an idle keep-alive connection stays open. workerd closes its idle pooled connections after 5 s;
 * Node's default of 5 s raced it, so workerd sometimes wrote a request on a connection the server was
 * closing and read "Network connection lost." (the Worker then reported the container gone). Longer than
 * any client's idle timeout, the client always closes first.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

const SIGNALS: Readonly<Record<string, NodeJS.Signals>> = {
  "2": "SIGINT",
  "9": "SIGKILL",
  "15": "SIGTERM",
  SIGINT: "SIGINT",
  SIGKILL: "SIGKILL",
  SIGTERM: "SIGTERM",
};

/**
 * Starts an HTTP server that answers the Cloudflare Sandbox container control API (`@cloudflare/sandbox`
 * 0.12.10) for many containers at once, running each container's commands in its own bubblewrap
 * confinement (or, when asked for by name, unconfined on the host).
 */
export async function createLocalContainerServer(
  options: LocalContainerServerOptions,
): Promise<LocalContainerServer> {
  const resolved = resolveServerOptions(options);
  // Refuses to start rather than run a container less confined than asked for.
  if (resolved.confinement === "bubblewrap") {
    assertConfinementAvailable();
    await assertContainerCgroupsAvailable({
      maxMemoryBytes: resolved.limits.maxContainerMemoryBytes,
      maxCpus: resolved.limits.maxContainerCpus,
    });
  }
  await mkdir(resolved.rootDir, { recursive: true });
  // A server killed on this root (no exit handler ran) left its trees; live servers' trees stay.
  await removeOrphanedContainers(resolved.rootDir, (name) => CONTAINER_ID_PATTERN.test(name));
  if (resolved.requireBun) assertBunAvailable(process.env.PATH);
  const controlToken = resolved.controlToken ?? createControlToken();
  const outbound = createOutboundRelay(resolved.limits.maxBodyBytes);
  const registry = createContainerRegistry(resolved.rootDir, resolved.limits, {
    ...resolved,
    network: confinementNetworkOf(resolved.network),
    outboundRelay: outbound,
  });

  const handleAdmin = async (
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): Promise<void> => {
    const [rawId = "", sub, jobId, ...rest] = url.pathname
      .slice(ADMIN_PREFIX.length + 1)
      .split("/");
    const id = decodeURIComponent(rawId);
    if (sub === OUTBOUND_PATH && rest.length === 0)
      return handleOutbound(request, response, id, jobId);
    if (sub !== undefined)
      throw new ControlApiError("NOT_FOUND", 404, `No route ${request.method} ${url.pathname}`, {});
    if (id === "" && request.method === "GET") {
      const containers = registry.list();
      sendJson(response, 200, {
        success: true,
        containers: containers.map((container) => container.id),
        routed: containers.filter((container) => container.routed).map((container) => container.id),
        timestamp: now(),
      });
    } else if (request.method === "PUT") {
      const body = await readJson(
        request,
        containerStartRequestSchema,
        resolved.limits.maxBodyBytes,
      );
      if (body.outbound === "worker" && registry.get(id) === undefined)
        outbound.setHttpsHosts(id, body.interceptHttps ?? []);
      const { created } = await registry.ensure(id, body.env, { outbound: body.outbound });
      sendJson(response, 200, { success: true, id, created, timestamp: now() });
    } else if (request.method === "DELETE") {
      const signal = SIGNALS[url.searchParams.get("signal") ?? "SIGKILL"] ?? "SIGKILL";
      const destroyed = await registry.destroy(id, signal);
      sendJson(response, 200, { success: true, id, destroyed, timestamp: now() });
    } else {
      throw new ControlApiError("NOT_FOUND", 404, `No route ${request.method} ${url.pathname}`, {});
    }
  };

  /** The Worker's side of Worker-routed egress: collect the next request, or answer one. */
  const handleOutbound = async (
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    jobId: string | undefined,
  ): Promise<void> => {
    if (registry.get(id) === undefined) {
      response.setHeader(CONTAINER_STATE_HEADER, "missing");
      throw new ControlApiError("CONTAINER_NOT_FOUND", 404, "The container is not running", {
        containerId: id,
      });
    }
    if (request.method === "GET" && jobId === undefined) {
      const job = await outbound.collect(id, COLLECT_WAIT_MS);
      if (job === null) return void response.writeHead(204, CORS_HEADERS).end();
      return sendJson(response, 200, job);
    }
    if (request.method === "PUT" && jobId === OUTBOUND_HTTPS_PATH) {
      const body = await readJson(request, httpsHostsRequestSchema, resolved.limits.maxBodyBytes);
      outbound.setHttpsHosts(id, body.hosts);
      return sendJson(response, 200, { success: true, timestamp: now() });
    }
    if (request.method === "POST" && jobId !== undefined) {
      const answer = await readJson(
        request,
        outboundAnswerSchema,
        resolved.limits.maxBodyBytes * 2,
      );
      const delivered = outbound.answer(id, decodeURIComponent(jobId), answer);
      return sendJson(response, delivered ? 200 : 404, { success: delivered, timestamp: now() });
    }
    throw new ControlApiError("NOT_FOUND", 404, `No outbound route ${request.method}`, {});
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://container");
    const method = request.method ?? "GET";
    // Every call, probes and lifecycle routes included: whatever reaches the port without the token is refused.
    await assertControlToken(request, controlToken);
    if (method === "OPTIONS") {
      response.writeHead(204, CORS_HEADERS).end();
      return;
    }
    if (method === "GET" && url.pathname === "/") return sendText(response, 200, "ready");
    if (method === "GET" && url.pathname === "/api/ping")
      return sendJson(response, 200, { success: true, message: "pong", timestamp: now() });
    if (method === "GET" && url.pathname === "/api/version")
      return sendJson(response, 200, {
        success: true,
        version: resolved.version,
        timestamp: now(),
      });
    if (url.pathname === ADMIN_PREFIX || url.pathname.startsWith(`${ADMIN_PREFIX}/`))
      return handleAdmin(request, response, url);
    const route = findRoute(method, url.pathname);
    if (route === undefined)
      throw new ControlApiError("NOT_FOUND", 404, `No route ${method} ${url.pathname}`, {});
    const containerId = request.headers[CONTAINER_ID_HEADER.toLowerCase()];
    if (typeof containerId !== "string" || containerId === "") {
      throw new ControlApiError(
        "CONTAINER_ID_REQUIRED",
        400,
        `Every /api call needs the ${CONTAINER_ID_HEADER} header`,
        {},
      );
    }
    const container = registry.get(containerId);
    if (container === undefined) {
      response.setHeader(CONTAINER_STATE_HEADER, "missing");
      throw new ControlApiError("CONTAINER_NOT_FOUND", 404, "The container is not running", {
        containerId,
      });
    }
    await route({
      request,
      response,
      url,
      container,
      limits: resolved.limits,
      fileWriteFillDelayMs: resolved.fileWriteFillDelayMs,
    });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.end();
        return;
      }
      const controlError = ControlApiError.isInstance(error)
        ? error
        : new ControlApiError(
            "INTERNAL_ERROR",
            500,
            error instanceof Error ? error.message : String(error),
            {},
          );
      sendError(response, controlError);
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Node requires the headers timeout to exceed the keep-alive timeout, or it may cut a request short.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  let baseUrl = "";
  const webSockets = createWebSocketAdapter(
    () => baseUrl,
    controlToken,
    resolved.limits.maxBodyBytes,
  );
  server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://container");
    const containerId = request.headers[CONTAINER_ID_HEADER.toLowerCase()];
    assertControlToken(request, controlToken).then(
      () => {
        if (
          WEBSOCKET_PATHS.has(url.pathname) &&
          typeof containerId === "string" &&
          registry.get(containerId) !== undefined
        ) {
          webSockets.upgrade(request, socket, head, containerId);
          return;
        }
        socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      },
      () =>
        void socket.end(
          "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(resolved.port, resolved.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Miniflare and other hosts may end the process on a signal without awaiting close(); the detached
  // process groups would outlive it, so they are killed synchronously on exit.
  const onExit = (): void => registry.destroyAllSync();
  process.once("exit", onExit);
  const port = (server.address() as AddressInfo).port;
  const host = resolved.host.includes(":") ? `[${resolved.host}]` : resolved.host;
  baseUrl = `http://${host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    controlToken,
    limits: resolved.limits,
    confinement: resolved.confinement,
    network: resolved.network,
    containers: registry,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Connections drop before the containers end, as when the server's process dies: a stream in flight
        // breaks off rather than reporting its command killed (an exit code reads as the command's own failure).
        webSockets.close();
        server.closeAllConnections();
        await registry.destroyAll();
        process.off("exit", onExit);
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
