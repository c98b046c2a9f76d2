import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyFetchFor } from "../src/proxy-fetch.js";

/** A forward proxy as the sandbox's egress proxy is one: absolute-form requests in, answered here. */
let proxy: Server;
const seen: string[] = [];
beforeAll(async () => {
  proxy = createServer((request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""}`);
    response.end("via proxy");
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});
afterAll(() => proxy.close());

describe("proxyFetchFor", () => {
  it("is undefined when the sandbox names no proxy for the origin's scheme", () => {
    expect(proxyFetchFor("http://127.0.0.1:9", {})).toBeUndefined();
    expect(proxyFetchFor("http://127.0.0.1:9", { HTTPS_PROXY: "http://127.0.0.1:3128" })).toBeUndefined();
  });

  it("sends plain HTTP to the proxy in absolute form, NO_PROXY notwithstanding", async () => {
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const viaProxy = proxyFetchFor("http://127.0.0.1:4567", { http_proxy: url, NO_PROXY: "localhost,127.0.0.1" }) as typeof fetch;
    const response = await viaProxy("http://127.0.0.1:4567/v1/sessions/s", { headers: { authorization: "Bearer t" } });
    expect(await response.text()).toBe("via proxy");
    expect(seen).toEqual(["GET http://127.0.0.1:4567/v1/sessions/s Bearer t"]);
  });
});
