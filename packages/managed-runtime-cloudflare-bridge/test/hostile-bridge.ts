import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";

/** A scripted HTTP peer standing in for a misbehaving Sandbox Bridge; real bridges never send most of these. */
export interface HostileBridge {
  readonly url: string;
  readonly requests: { method: string; url: string; authorization: string | undefined }[];
  /** Sets how requests are answered; `body` is the request's whole body. */
  respond(
    handler: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void,
  ): void;
  close(): Promise<void>;
}

export async function startHostileBridge(): Promise<HostileBridge> {
  let handler: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void = (
    _request,
    response,
  ) => {
    response.writeHead(404, { "content-type": "text/plain" }).end("404 Not Found");
  };
  const requests: HostileBridge["requests"] = [];
  const server = createServer((request, response) => {
    requests.push({
      method: request.method ?? "",
      url: request.url ?? "",
      authorization: request.headers.authorization,
    });
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handler(request, response, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(next) {
      handler = next;
    },
    close: () =>
      new Promise((resolve) => server.closeAllConnections() ?? server.close(() => resolve())),
  };
}

export function sse(
  response: ServerResponse,
  frames: readonly string[],
  contentType = "text/event-stream",
): void {
  response.writeHead(200, { "content-type": contentType });
  for (const frame of frames) response.write(frame);
  response.end();
}

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Starts a scripted bridge before the file's tests and closes it after them; the getter gives it. */
export function hostileBridgeForFile(): () => HostileBridge {
  let bridge: HostileBridge | undefined;
  beforeAll(async () => {
    bridge = await startHostileBridge();
  });
  afterAll(() => bridge?.close());
  return () => bridge as HostileBridge;
}
