/**
 * The Node half of the local egress relay. The container's processes run on the host network, so the
 * test shim points their `http_proxy` here; each proxied request waits in a per-container queue until
 * the container's Durable Object collects it, sends it through the fetcher workerd registered for the
 * container, and posts the answer back. HTTPS (`CONNECT`) is refused: the relay terminates no TLS.
 */
import { randomUUID } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

interface Job {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const LONG_POLL_MS = 10_000;
const ANSWER_TIMEOUT_MS = 30_000;

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export interface EgressRelay {
  readonly url: string;
  close(): Promise<void>;
}

export async function startEgressRelay(): Promise<EgressRelay> {
  const queues = new Map<string, Job[]>();
  const waiters = new Map<string, (job: Job | null) => void>();
  const answers = new Map<string, ServerResponse>();

  const enqueue = (containerId: string, job: Job): void => {
    const waiter = waiters.get(containerId);
    if (waiter) {
      waiters.delete(containerId);
      waiter(job);
      return;
    }
    queues.set(containerId, [...(queues.get(containerId) ?? []), job]);
  };

  const proxied = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const credentials = Buffer.from(
      (request.headers["proxy-authorization"] ?? "").replace(/^Basic /i, ""),
      "base64",
    ).toString("utf8");
    const containerId = credentials.split(":")[0] ?? "";
    if (containerId === "") return void response.writeHead(407).end();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === "string" && name !== "proxy-authorization") headers[name] = value;
    const job: Job = {
      id: randomUUID(),
      method: request.method ?? "GET",
      url: request.url ?? "",
      headers,
      body: (await readBody(request)).toString("base64"),
    };
    answers.set(job.id, response);
    setTimeout(() => {
      if (answers.delete(job.id))
        response.writeHead(504).end("the container's Durable Object did not collect the request");
    }, ANSWER_TIMEOUT_MS).unref();
    enqueue(containerId, job);
  };

  const worker = async (
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): Promise<void> => {
    if (url.pathname === "/__relay/next") {
      const containerId = url.searchParams.get("container") ?? "";
      const queued = queues.get(containerId)?.shift();
      const job =
        queued ??
        (await new Promise<Job | null>((resolve) => {
          waiters.get(containerId)?.(null);
          waiters.set(containerId, resolve);
          setTimeout(() => {
            if (waiters.get(containerId) === resolve) waiters.delete(containerId);
            resolve(null);
          }, LONG_POLL_MS).unref();
        }));
      if (!job) return void response.writeHead(204).end();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(job));
      return;
    }
    const id = url.pathname.slice("/__relay/answer/".length);
    const target = answers.get(id);
    const answer = JSON.parse((await readBody(request)).toString("utf8")) as {
      status: number;
      headers: Record<string, string>;
      body: string;
    };
    response.writeHead(target ? 204 : 404).end();
    if (!target) return;
    answers.delete(id);
    target.writeHead(answer.status, answer.headers).end(Buffer.from(answer.body, "base64"));
  };

  const server: Server = createServer((request, response) => {
    const handled = request.url?.startsWith("/__relay/")
      ? worker(request, response, new URL(request.url, "http://relay"))
      : proxied(request, response);
    handled.catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  server.on("connect", (_request, socket) => socket.end("HTTP/1.1 501 Not Implemented\r\n\r\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const waiter of waiters.values()) waiter(null);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
