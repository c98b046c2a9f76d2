/** The egress proxy's allow-list and its answers, over its Unix socket. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "node:http";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { parseEgressAllowList, startEgressProxy } from "../src/egress-proxy.js";

/** One request through the proxy socket: status and body. */
function viaProxy(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { socketPath, path: url, headers: { Host: new URL(url).host } },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("egress allow-list", () => {
  it("parses host, host:port and *.domain entries, ports defaulting to 80 and 443", () => {
    expect(parseEgressAllowList(["Example.com", "api.test:8443", "*.npmjs.org"])).toEqual([
      { host: "example.com", wildcard: false, ports: [80, 443] },
      { host: "api.test", wildcard: false, ports: [8443] },
      { host: "npmjs.org", wildcard: true, ports: [80, 443] },
    ]);
  });

  it("refuses a malformed entry with invalid_request", () => {
    for (const entry of ["http://example.com", "a b", "example.com/path", ""]) {
      let caught: unknown;
      try {
        parseEgressAllowList([entry]);
      } catch (error) {
        caught = error;
      }
      expect(ManagedRuntimeError.hasCode(caught, "invalid_request")).toBe(true);
    }
  });

  it("forwards allowed destinations and answers 403 for the rest, remembering what it refused", async () => {
    const app = createServer((_request, response) => response.end("through"));
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const port = (app.address() as AddressInfo).port;
    const proxy = await startEgressProxy([`127.0.0.1:${port}`]);
    try {
      expect(await viaProxy(proxy.socketPath, `http://127.0.0.1:${port}/x`)).toEqual({
        status: 200,
        body: "through",
      });
      expect(await viaProxy(proxy.socketPath, `http://127.0.0.1:${port + 1}/`)).toMatchObject({
        status: 403,
      });
      expect(await viaProxy(proxy.socketPath, `http://localhost:${port}/`)).toMatchObject({
        status: 403,
      });
      expect(proxy.refused).toEqual([`127.0.0.1:${port + 1}`, `localhost:${port}`]);
    } finally {
      await proxy.close();
      app.close();
    }
  });

  it("with a handler, hands every HTTP request to it and refuses every CONNECT", async () => {
    const seen: string[] = [];
    const proxy = await startEgressProxy({
      handleHttp: (incoming, response) => {
        seen.push(`${incoming.method} ${incoming.url}`);
        response.end("answered by the handler");
      },
    });
    try {
      expect(await viaProxy(proxy.socketPath, "http://api.example.test/v1?q=1")).toEqual({
        status: 200,
        body: "answered by the handler",
      });
      const connected = await new Promise<number>((resolve, reject) => {
        const outgoing = request({
          socketPath: proxy.socketPath,
          method: "CONNECT",
          path: "api.example.test:443",
        });
        outgoing.on("connect", (response, socket) => {
          socket.destroy();
          resolve(response.statusCode ?? 0);
        });
        outgoing.on("response", (response) => resolve(response.statusCode ?? 0));
        outgoing.on("error", reject);
        outgoing.end();
      });
      expect(connected).toBe(403);
      expect(seen).toEqual(["GET http://api.example.test/v1?q=1"]);
      expect(proxy.refused).toEqual(["api.example.test:443"]);
    } finally {
      await proxy.close();
    }
  });
});

describe("egress connections end with their guest", () => {
  it("closes an allowed upstream stream when the guest goes away, and a tunnel when either end closes", async () => {
    const closed: string[] = [];
    // A destination that streams until its client goes (as the control plane's event streams do).
    const app = createServer((incoming, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      const ticker = setInterval(() => response.write("data: tick\n\n"), 50);
      incoming.socket.once("close", () => {
        clearInterval(ticker);
        closed.push(incoming.url ?? "");
      });
    });
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const port = (app.address() as AddressInfo).port;
    const proxy = await startEgressProxy([`127.0.0.1:${port}`]);
    try {
      await new Promise<void>((resolve, reject) => {
        const outgoing = request(
          {
            socketPath: proxy.socketPath,
            path: `http://127.0.0.1:${port}/stream`,
            headers: { Host: `127.0.0.1:${port}` },
          },
          (response) => {
            response.once("data", () => {
              outgoing.destroy();
              resolve();
            });
          },
        );
        outgoing.on("error", () => undefined);
        outgoing.on("close", resolve);
        outgoing.once("error", reject);
        outgoing.end();
      });
      await expect.poll(() => closed, { timeout: 10_000 }).toEqual(["/stream"]);

      // A CONNECT tunnel to the same destination: the guest closing it closes the destination's side.
      await new Promise<void>((resolve, reject) => {
        const outgoing = request({
          socketPath: proxy.socketPath,
          method: "CONNECT",
          path: `127.0.0.1:${port}`,
        });
        outgoing.on("connect", (_response, socket) => {
          socket.write(`GET /tunnel HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
          socket.once("data", () => {
            socket.destroy();
            resolve();
          });
        });
        outgoing.on("error", reject);
        outgoing.end();
      });
      await expect.poll(() => closed, { timeout: 10_000 }).toEqual(["/stream", "/tunnel"]);
    } finally {
      await proxy.close();
      app.closeAllConnections();
      app.close();
    }
  });
});
