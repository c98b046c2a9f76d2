import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalContainerRuntime } from "../src/shim/local-runtime.js";
import { type EgressHarness, startEgressHarness } from "./worker-egress-harness.js";
import { authorizedFetch } from "./helpers.js";
const SECRET = `injected-${Math.random().toString(36).slice(2)}`;
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
const sha256 = (path: string): string =>
  createHash("sha256").update(readFileSync(path)).digest("hex");

/**
 * HTTPS of a Worker-routed container: decrypted at the proxy with the server's CA only for the hosts
 * `interceptOutboundHttps` named, refused otherwise. The fetcher stands in for workerd's `ContainerProxy`
 * loopback, running what an outbound handler does.
 */
describe("HTTPS from a Worker-routed container goes through its Worker's HTTPS interception", () => {
  let harness: EgressHarness;
  const hostBundleHash = sha256(HOST_BUNDLE);
  const hostHadCloudflareDir = existsSync("/etc/cloudflare");
  const upstream: RequestListener = (request, response) =>
    response.end(
      `upstream saw ${request.method} ${request.url} ${request.headers.authorization === `Bearer ${SECRET}` ? "with" : "without"} credential`,
    );
  const handled: string[] = [];
  const fetcher = {
    async fetch(input: Request | string, init?: RequestInit): Promise<Response> {
      const request = new Request(input, init);
      const url = new URL(request.url);
      handled.push(`${request.method} ${url.protocol}//${url.host}${url.pathname}`);
      if (url.hostname !== "allowed.example")
        return new Response("denied by the handler", { status: 403 });
      const port = harness.upstreamPort;
      return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
        headers: { authorization: `Bearer ${SECRET}` },
      });
    },
  };

  beforeAll(async () => {
    harness = await startEgressHarness("oma-local-container-https-egress-", upstream);
  });
  afterAll(() => harness.close());
  const exec = (id: string, command: string): Promise<string> => harness.exec(id, command);
  const started = (id: string): Promise<void> => harness.started(id);

  it("reaches the handler for a registered host, refuses an unlisted one, and leaves the host's trust store alone", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "tls-per-host", {
      controlToken: harness.server.controlToken,
    });
    await runtime.interceptOutboundHttp("allowed.example", fetcher);
    await runtime.interceptOutboundHttps("allowed.example", fetcher);
    runtime.start({ enableInternet: false });
    await started("tls-per-host");
    try {
      // Plain curl: it trusts the container's own system bundle, which holds the server's CA.
      expect(
        await exec("tls-per-host", "curl -sS --max-time 30 https://allowed.example/v1/data?q=2"),
      ).toBe("upstream saw GET /v1/data?q=2 with credential");
      expect(handled.at(-1)).toBe("GET https://allowed.example/v1/data");
      // A host with no HTTPS registration: CONNECT refused (curl exit 56), the handler never asked.
      const before = handled.length;
      expect(
        await exec(
          "tls-per-host",
          'curl -sS --max-time 30 -o /dev/null https://unlisted.example/x; echo "exit=$?"',
        ),
      ).toMatch(/exit=56/);
      expect(handled).toHaveLength(before);
      // The CA certificate is at Cloudflare's path and in the bundle; no private key anywhere the container reads.
      const trust = await exec(
        "tls-per-host",
        [
          "head -1 /etc/cloudflare/certs/cloudflare-containers-ca.crt",
          "grep -c 'BEGIN CERTIFICATE' /etc/cloudflare/certs/cloudflare-containers-ca.crt",
          'tail -c 2000 /etc/ssl/certs/ca-certificates.crt | grep -q "$(sed -n 2p /etc/cloudflare/certs/cloudflare-containers-ca.crt)" && echo in-bundle',
          "grep -rlsI 'PRIVATE KEY' /etc /tmp /workspace /mnt 2>/dev/null | head -3; echo keys-listed",
          'echo "$NODE_EXTRA_CA_CERTS"',
        ].join("; "),
      );
      expect(trust.trim().split("\n")).toEqual([
        "-----BEGIN CERTIFICATE-----",
        "1",
        "in-bundle",
        "keys-listed",
        "/etc/cloudflare/certs/cloudflare-containers-ca.crt",
      ]);
      // The credential went to the upstream, never into the container.
      expect(
        await exec(
          "tls-per-host",
          `env; grep -rl '${SECRET}' /workspace /tmp 2>/dev/null; echo done`,
        ),
      ).not.toContain(SECRET);
    } finally {
      await runtime.destroy();
    }
    // The host's own trust store is untouched and the key never reached a file on the host either.
    expect(sha256(HOST_BUNDLE)).toBe(hostBundleHash);
    expect(existsSync("/etc/cloudflare")).toBe(hostHadCloudflareDir);
    let hostKeys = "";
    try {
      hostKeys = execFileSync("grep", ["-rlsI", "PRIVATE KEY", harness.rootDir], {
        encoding: "utf8",
      });
    } catch {
      // grep exits 1 when nothing matched.
    }
    expect(hostKeys).toBe("");
  });

  it("without an HTTPS registration every CONNECT is refused while HTTP still reaches the handler", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "tls-none", {
      controlToken: harness.server.controlToken,
    });
    await runtime.interceptAllOutboundHttp(fetcher);
    runtime.start({ enableInternet: false });
    await started("tls-none");
    try {
      expect(await exec("tls-none", "curl -sS --max-time 30 http://allowed.example/plain")).toBe(
        "upstream saw GET /plain with credential",
      );
      const before = handled.length;
      expect(
        await exec(
          "tls-none",
          'curl -sS --max-time 30 -o /dev/null https://allowed.example/tls; echo "exit=$?"',
        ),
      ).toMatch(/exit=56/);
      // Even with the proxy skipped, curl -k, a direct TCP connect: nothing goes out.
      expect(
        await exec(
          "tls-none",
          "curl -sSk --noproxy '*' --max-time 10 https://1.1.1.1/ >/dev/null 2>&1 && echo reached || echo refused",
        ),
      ).toBe("refused\n");
      expect(handled).toHaveLength(before);
      // A malformed host list is refused with a typed error and changes nothing.
      const bad = await authorizedFetch(
        harness.server,
        `${harness.server.url}/__oma/containers/tls-none/outbound/https`,
        { method: "PUT", body: JSON.stringify({ hosts: ["a b"] }) },
      );
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { code?: string }).code).toBe("VALIDATION_FAILED");
      expect(
        await exec(
          "tls-none",
          'curl -sS --max-time 30 -o /dev/null https://allowed.example/tls; echo "exit=$?"',
        ),
      ).toMatch(/exit=56/);
    } finally {
      await runtime.destroy();
    }
  });

  it("a container adopted after a restart decrypts HTTPS once the class registers it again", async () => {
    // Started through the server, as a Durable Object before a workerd restart did.
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/tls-adopted`, {
      method: "PUT",
      body: JSON.stringify({ outbound: "worker" }),
    });
    const runtime = createLocalContainerRuntime(harness.server.url, "tls-adopted", {
      controlToken: harness.server.controlToken,
    });
    await runtime.adopt();
    try {
      expect(
        await exec(
          "tls-adopted",
          'curl -sS --max-time 30 -o /dev/null https://allowed.example/early; echo "exit=$?"',
        ),
      ).toMatch(/exit=56/);
      await runtime.interceptAllOutboundHttp(fetcher);
      await runtime.interceptOutboundHttps("*", fetcher);
      expect(await exec("tls-adopted", "curl -sS --max-time 30 https://allowed.example/late")).toBe(
        "upstream saw GET /late with credential",
      );
      expect(
        await exec(
          "tls-adopted",
          "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' https://other.example/x",
        ),
      ).toBe("403");
    } finally {
      await runtime.destroy();
    }
  });
});
