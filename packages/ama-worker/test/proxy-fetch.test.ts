import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyFetchFor } from "../src/proxy-fetch.js";

/** A forward proxy as the sandbox's egress proxy is one: absolute-form requests in, answered here; CONNECT refused. */
let proxy: Server;
const seen: string[] = [];
beforeAll(async () => {
  proxy = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => void (body += chunk));
    request.on("end", () => {
      seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""} ${body}`);
      if (request.url?.endsWith("/empty")) return void response.writeHead(204).end();
      response.writeHead(201, { "content-type": "text/event-stream", "x-seen": "yes" });
      response.write("data: one\n\n");
      setTimeout(() => response.end("data: two\n\n"), 50);
    });
  });
  proxy.on("connect", (_request, socket) => socket.end("HTTP/1.1 403 Forbidden\r\n\r\n"));
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});
afterAll(() => proxy.close());
const proxyUrl = (): string => `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

describe("proxyFetchFor", () => {
  it("is undefined unless the sandbox says its proxy is its only way out (HTTP(S)_PROXY alone keep Node's direct fetch)", () => {
    expect(proxyFetchFor("http://127.0.0.1:9", {})).toBeUndefined();
    expect(
      proxyFetchFor("http://127.0.0.1:9", {
        HTTP_PROXY: "http://127.0.0.1:3128",
        HTTPS_PROXY: "http://127.0.0.1:3128",
      }),
    ).toBeUndefined();
  });

  it("sends plain HTTP to the proxy in absolute form, NO_PROXY notwithstanding, and streams the answer", async () => {
    const viaProxy = proxyFetchFor("http://127.0.0.1:4567", {
      OMA_EGRESS_PROXY: proxyUrl(),
      NO_PROXY: "localhost,127.0.0.1",
    }) as typeof fetch;
    const response = await viaProxy("http://127.0.0.1:4567/v1/sessions/s/events", {
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: '{"a":1}',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-seen")).toBe("yes");
    expect(await response.text()).toBe("data: one\n\ndata: two\n\n");
    expect(seen.at(-1)).toBe('POST http://127.0.0.1:4567/v1/sessions/s/events Bearer t {"a":1}');
    const empty = await viaProxy("http://127.0.0.1:4567/empty");
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it("tunnels HTTPS with CONNECT, and fails the call when the proxy refuses it", async () => {
    const viaProxy = proxyFetchFor("https://api.example.test", {
      OMA_EGRESS_PROXY: proxyUrl(),
    }) as typeof fetch;
    await expect(viaProxy("https://api.example.test/v1/x")).rejects.toThrow(
      "the proxy refused CONNECT api.example.test:443 with 403",
    );
  });

  it("stops a call its signal aborts", async () => {
    const viaProxy = proxyFetchFor("http://127.0.0.1:4567", {
      OMA_EGRESS_PROXY: proxyUrl(),
    }) as typeof fetch;
    await expect(
      viaProxy("http://127.0.0.1:4567/x", { signal: AbortSignal.abort() }),
    ).rejects.toThrow();
  });
});
