import { type IncomingMessage, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** What /readyz reports: each dependency's state; ready when none is failing. */
export type ReadinessState = Readonly<
  Record<string, { readonly ok: boolean; readonly detail?: string }>
>;

export interface HealthServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly readiness: () => Promise<ReadinessState>;
  /** POST /webhook, when a webhook key is configured. */
  readonly webhook?: (request: {
    body: string;
    headers: Record<string, string>;
  }) => Promise<{ status: number; body: string }>;
}

const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** Serves /healthz (the process answers), /readyz, /metrics and, when configured, POST /webhook. */
export async function startHealthServer(
  options: HealthServerOptions,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const reply = (status: number, type: string, body: string) => {
      response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      response.end(body);
    };
    const path = (request.url ?? "/").split("?")[0];
    void (async () => {
      if (request.method === "GET" && path === "/healthz") return reply(200, "text/plain", "ok\n");
      if (request.method === "GET" && path === "/readyz") {
        const state = await options.readiness();
        const ready = Object.values(state).every((entry) => entry.ok);
        return reply(
          ready ? 200 : 503,
          "application/json",
          `${JSON.stringify({ ready, checks: state })}\n`,
        );
      }
      if (request.method === "GET" && path === "/metrics")
        return reply(200, options.registry.contentType, await options.registry.metrics());
      if (request.method === "POST" && path === "/webhook" && options.webhook) {
        const body = await readBody(request);
        if (body === null) return reply(413, "text/plain", "webhook body too large\n");
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([key, value]) => [
            key,
            Array.isArray(value) ? value.join(",") : (value ?? ""),
          ]),
        );
        const answer = await options.webhook({ body, headers });
        return reply(answer.status, "application/json", answer.body);
      }
      return reply(404, "text/plain", "not found\n");
    })().catch(() => {
      if (!response.headersSent) reply(500, "text/plain", "internal error\n");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_WEBHOOK_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
