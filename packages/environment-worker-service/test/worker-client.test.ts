import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadServiceConfig } from "../src/config/load-config.js";
import { createServiceLogger } from "../src/logging/logger.js";
import { createWorkerClient } from "../src/service/run-service.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("createWorkerClient", () => {
  it("sends the SDK's calls through Node's own HTTP client, never Node's fetch", async () => {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const loaded = loadServiceConfig({
        env: {
          OMA_ENVIRONMENT_ID: "env_1",
          OMA_ENVIRONMENT_KEY: "environment-key-value",
          OMA_STORE: "sqlite:///tmp/a.sqlite",
          OMA_API_BASE_URL: `http://127.0.0.1:${port}`,
        },
      });
      const logger = createServiceLogger({
        level: "warn",
        format: "json",
        secrets: loaded.secrets,
        destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
      });
      const nodeFetch = vi.fn(() => Promise.reject(new Error("Node's fetch was called")));
      vi.stubGlobal("fetch", nodeFetch);
      const client = createWorkerClient(loaded, logger);
      // The environment key travels per call (as the SDK's work calls send it).
      const keyed = { headers: { authorization: "Bearer environment-key-value" } };
      expect(await client.get("/v1/probe", keyed)).toEqual({ ok: true });
      // A copy the environment worker derives for a work item's credential keeps the same fetch.
      const derived = client.withOptions({ apiKey: null, authToken: "work-token" });
      expect(await derived.get("/v1/probe")).toEqual({ ok: true });
      expect(seen).toEqual(["GET /v1/probe", "GET /v1/probe"]);
      expect(nodeFetch).not.toHaveBeenCalled();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
