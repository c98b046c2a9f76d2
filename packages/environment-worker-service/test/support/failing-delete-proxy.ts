import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Stands in for a bridge outage that hits only sandbox deletes: forwards every request to the real bridge
 * Worker, except `DELETE /v1/sandbox/:id`, answered 503 while `failDeletes` is on. A terminate then fails as
 * it would against an unavailable Cloudflare bridge, and the host leaves an orphan.
 */
export async function startFailingDeleteProxy(
  target: string,
): Promise<{ url: string; failDeletes: boolean; deletesRefused: number; close(): Promise<void> }> {
  const upstream = new URL(target);
  const state = { failDeletes: true, deletesRefused: 0 };
  const server = createServer((request, response) => {
    if (
      state.failDeletes &&
      request.method === "DELETE" &&
      /^\/v1\/sandbox\/[^/]+$/.test(request.url ?? "")
    ) {
      state.deletesRefused += 1;
      request.resume();
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "bridge unavailable" }));
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get failDeletes() {
      return state.failDeletes;
    },
    set failDeletes(value: boolean) {
      state.failDeletes = value;
    },
    get deletesRefused() {
      return state.deletesRefused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
