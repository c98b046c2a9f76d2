import { mkdtempSync, rmSync } from "node:fs";
import {
  type IncomingMessage,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from "node:http";
import { type Socket, connect } from "node:net";
import { TLSSocket } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import type { EgressCertificateAuthority } from "./egress-ca.js";
import EGRESS_FORWARDER from "./programs/egress-forwarder.ts?program";

/** A filtering HTTP proxy on a Unix socket: the only way out of a container that has no network. */
export interface EgressProxy {
  /** Host path of the proxy's socket, bound into the container. */
  readonly socketPath: string;
  /** Connections refused so far, newest last (host and port only). */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

/** One allow-list entry: `host`, `host:port` or `*.domain[:port]`; without a port, 80 and 443. */
interface Rule {
  readonly host: string;
  readonly wildcard: boolean;
  readonly ports: readonly number[];
}

/** Where an intercepted TLS socket keeps the origin (`https://host[:port]`) of its CONNECT. */
const ORIGIN = Symbol("egress-origin");

const ENTRY = /^(\*\.)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/** Parses allow-list entries; a malformed one → `invalid_request` naming it. */
export function parseEgressAllowList(entries: readonly string[]): readonly Rule[] {
  return entries.map((entry) => {
    const match = ENTRY.exec(entry.trim());
    if (match === null)
      throw new InvalidRequestError({
        message: `not an egress allow-list entry (host, host:port or *.domain): ${entry.slice(0, 200)}`,
        context: { entry: entry.slice(0, 200) },
      });
    const port = match[3] === undefined ? undefined : Number(match[3]);
    return {
      host: (match[2] as string).toLowerCase(),
      wildcard: match[1] !== undefined,
      ports: port === undefined ? [80, 443] : [port],
    };
  });
}

function allowed(rules: readonly Rule[], host: string, port: number): boolean {
  const name = host.toLowerCase();
  return rules.some(
    (rule) =>
      rule.ports.includes(port) &&
      (rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host),
  );
}

/** Splits `host:port` (brackets around IPv6 kept off the host). */
function splitAuthority(
  authority: string,
  defaultPort: number,
): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(authority);
  if (match === null) return undefined;
  return {
    host: (match[1] as string).replace(/^\[|\]$/g, ""),
    port: match[2] === undefined ? defaultPort : Number(match[2]),
  };
}

/**
 * Answers one plain-HTTP request a container sent to its proxy (`request.url` is the absolute URL the
 * guest asked for). The proxy calls it instead of the allow-list when the decision lies elsewhere, for
 * example with a Worker's outbound handlers.
 */
export type EgressHttpHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * HTTPS interception in handler mode: a `CONNECT host:port` that `intercepts` accepts is answered by the
 * proxy itself, which terminates the guest's TLS with a leaf certificate of `authority` for `host` and
 * hands each request inside to the handler with an `https://host[:port]` URL; its answer goes back
 * inside the TLS session. Any other `CONNECT` gets 403.
 */
export interface EgressHttpsInterception {
  readonly authority: EgressCertificateAuthority;
  intercepts(host: string, port: number): boolean;
}

/**
 * What a proxy lets through: an allow-list, or a handler that answers every HTTP request (and the HTTPS
 * requests `https` intercepts; every other `CONNECT` refused).
 */
export type EgressPolicy =
  | readonly string[]
  | {
      readonly handleHttp: EgressHttpHandler;
      readonly https?: EgressHttpsInterception | undefined;
    };

/**
 * Starts the proxy. With an allow-list, `CONNECT host:port` (HTTPS and any TCP) and absolute-URI HTTP
 * requests reach the destination only when the list names it; everything else gets 403. It resolves names
 * itself, so the container needs no DNS. With a handler, every HTTP request goes to it, and so does
 * every request inside a `CONNECT` that its HTTPS interception accepts; every other `CONNECT` gets 403.
 * The proxy then opens no connection of its own.
 */
export async function startEgressProxy(policy: EgressPolicy): Promise<EgressProxy> {
  const handleHttp = "handleHttp" in policy ? policy.handleHttp : undefined;
  const https = "handleHttp" in policy ? policy.https : undefined;
  const rules = "handleHttp" in policy ? [] : parseEgressAllowList(policy as readonly string[]);
  const directory = mkdtempSync(join(tmpdir(), "oma-egress-"));
  const socketPath = join(directory, "proxy.sock");
  const refused: string[] = [];
  const refuse = (what: string): void => {
    refused.push(what);
    if (refused.length > 100) refused.shift();
  };
  const open = new Set<Socket>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(request.url ?? "");
    } catch {
      response.writeHead(400).end("absolute URL required\n");
      return;
    }
    if (handleHttp !== undefined && target.protocol === "http:")
      return handleHttp(request, response);
    const port = target.port === "" ? 80 : Number(target.port);
    if (target.protocol !== "http:" || !allowed(rules, target.hostname, port)) {
      refuse(`${target.hostname}:${port}`);
      const body = `egress to ${target.hostname}:${port} is not allowed\n`;
      response
        .writeHead(403, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) })
        .end(body);
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port,
        method: request.method,
        path: `${target.pathname}${target.search}`,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // At once, not with the first body byte: an event stream's client waits for its headers.
        response.flushHeaders();
        answer.pipe(response);
      },
    );
    upstream.on("error", () =>
      response.headersSent
        ? response.destroy()
        : response.writeHead(502).end("upstream unreachable\n"),
    );
    // A guest that went away (its process ended, its container stopped) takes its upstream request along:
    // an event stream it was reading would otherwise stay open for as long as the destination keeps it.
    response.once("close", () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  });
  // Requests inside intercepted TLS sessions: their URL is set from the CONNECT target, never from the
  // guest's Host header, so what the handler sees is what the proxy agreed to intercept.
  const inner = createServer((request: IncomingMessage, response: ServerResponse) => {
    const origin = (request.socket as Socket & { [ORIGIN]?: string })[ORIGIN] as string;
    request.url = `${origin}${request.url?.startsWith("/") === true ? request.url : "/"}`;
    (handleHttp as EgressHttpHandler)(request, response);
  });
  inner.on("clientError", (_error, socket) => socket.destroy());
  server.on("connect", (request: IncomingMessage, client: Socket, head: Buffer) => {
    const target = splitAuthority(request.url ?? "", 443);
    if (handleHttp !== undefined) {
      if (
        target === undefined ||
        https === undefined ||
        !https.intercepts(target.host, target.port)
      ) {
        refuse(request.url ?? "");
        client.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      const authority = https.authority;
      const host = target.host;
      if (head.length > 0) client.unshift(head);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      const tls = new TLSSocket(client, {
        isServer: true,
        secureContext: authority.secureContextFor(host),
        SNICallback: (_name, done) => done(null, authority.secureContextFor(host)),
      });
      const bracketed = host.includes(":") ? `[${host}]` : host;
      (tls as TLSSocket & { [ORIGIN]?: string })[ORIGIN] =
        `https://${bracketed}${target.port === 443 ? "" : `:${target.port}`}`;
      tls.on("error", () => client.destroy());
      client.on("error", () => tls.destroy());
      inner.emit("connection", tls);
      return;
    }
    if (target === undefined || !allowed(rules, target.host, target.port)) {
      refuse(request.url ?? "");
      client.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    open.add(upstream);
    // Either end closing closes the other: a tunnel outlives neither its guest nor its destination.
    upstream.once("close", () => {
      open.delete(upstream);
      client.destroy();
    });
    client.once("close", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    refused,
    async close() {
      for (const socket of open) socket.destroy();
      server.closeAllConnections();
      inner.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Where the proxy's socket appears in the container, and the loopback port its forwarder listens on. */
export const EGRESS_SOCKET_PATH = "/run/openma-egress.sock";
export const EGRESS_PROXY_PORT = 3128;

/** The container's first process with the proxy: a forwarder from {@link EGRESS_PROXY_PORT} to the socket. */
export function egressForwarderCommand(): string[] {
  return [process.execPath, "-e", EGRESS_FORWARDER, EGRESS_SOCKET_PATH, String(EGRESS_PROXY_PORT)];
}

/**
 * Proxy variables every command of such a container gets. `OMA_EGRESS_PROXY` says more than
 * `HTTP(S)_PROXY`: the proxy is the container's only way out, for every destination, the host's loopback
 * addresses included (which `NO_PROXY` keeps for the container's own); `oma-ama-worker` follows it.
 */
export const EGRESS_PROXY_ENV: Readonly<Record<string, string>> = {
  OMA_EGRESS_PROXY: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  HTTP_PROXY: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  HTTPS_PROXY: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  http_proxy: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  https_proxy: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  NO_PROXY: "localhost,127.0.0.1,::1",
  no_proxy: "localhost,127.0.0.1,::1",
};
