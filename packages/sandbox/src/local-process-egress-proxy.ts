import { mkdtempSync, rmSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from "node:http";
import { type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";

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

const ENTRY = /^(\*\.)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/** Parses allow-list entries; a malformed one → `invalid_request` naming it. */
export function parseEgressAllowList(entries: readonly string[]): readonly Rule[] {
  return entries.map((entry) => {
    const match = ENTRY.exec(entry.trim());
    if (match === null) throw new InvalidRequestError({ message: `not an egress allow-list entry (host, host:port or *.domain): ${entry.slice(0, 200)}`, context: { entry: entry.slice(0, 200) } });
    const port = match[3] === undefined ? undefined : Number(match[3]);
    return { host: (match[2] as string).toLowerCase(), wildcard: match[1] !== undefined, ports: port === undefined ? [80, 443] : [port] };
  });
}

function allowed(rules: readonly Rule[], host: string, port: number): boolean {
  const name = host.toLowerCase();
  return rules.some((rule) => rule.ports.includes(port) && (rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host));
}

/** Splits `host:port` (brackets around IPv6 kept off the host). */
function splitAuthority(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(authority);
  if (match === null) return undefined;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ""), port: match[2] === undefined ? defaultPort : Number(match[2]) };
}

/**
 * Starts the proxy: `CONNECT host:port` (HTTPS and any TCP) and absolute-URI HTTP requests reach the
 * destination only when the allow-list names it; everything else gets 403. It resolves names itself, so
 * the container needs no DNS.
 */
export async function startEgressProxy(allowList: readonly string[]): Promise<EgressProxy> {
  const rules = parseEgressAllowList(allowList);
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
    const port = target.port === "" ? 80 : Number(target.port);
    if (target.protocol !== "http:" || !allowed(rules, target.hostname, port)) {
      refuse(`${target.hostname}:${port}`);
      const body = `egress to ${target.hostname}:${port} is not allowed\n`;
      response.writeHead(403, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) }).end(body);
      return;
    }
    const upstream = httpRequest({ host: target.hostname, port, method: request.method, path: `${target.pathname}${target.search}`, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on("error", () => response.headersSent ? response.destroy() : response.writeHead(502).end("upstream unreachable\n"));
    request.pipe(upstream);
  });
  server.on("connect", (request: IncomingMessage, client: Socket, head: Buffer) => {
    const target = splitAuthority(request.url ?? "", 443);
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
    upstream.once("close", () => open.delete(upstream));
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
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Where the proxy's socket appears in the container, and the loopback port its forwarder listens on. */
export const EGRESS_SOCKET_PATH = "/run/openma-egress.sock";
export const EGRESS_PROXY_PORT = 3128;

/**
 * The container's first process when egress goes through the proxy: a forwarder on
 * `127.0.0.1:3128` (the container's own loopback) to the proxy's socket. It says `ready` once listening
 * and exits when its stdin closes, like the plain first process.
 */
export const EGRESS_FORWARDER = [
  'const net = require("node:net");',
  "const server = net.createServer((client) => {",
  `  const upstream = net.connect(${JSON.stringify(EGRESS_SOCKET_PATH)});`,
  "  client.on('error', () => upstream.destroy()); upstream.on('error', () => client.destroy());",
  "  client.pipe(upstream).pipe(client);",
  "});",
  `server.listen(${EGRESS_PROXY_PORT}, "127.0.0.1", () => process.stdout.write("ready\\n"));`,
  "process.stdin.on('end', () => process.exit(0)); process.stdin.resume();",
].join("\n");

/** Proxy variables every command of such a container gets. */
export const EGRESS_PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  HTTPS_PROXY: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  http_proxy: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  https_proxy: `http://127.0.0.1:${EGRESS_PROXY_PORT}`,
  NO_PROXY: "localhost,127.0.0.1,::1",
  no_proxy: "localhost,127.0.0.1,::1",
};
