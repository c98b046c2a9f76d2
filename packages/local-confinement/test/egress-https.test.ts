/** HTTPS interception of the egress proxy in handler mode: TLS terminated with the proxy's CA, requests handed on. */
import { connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createConfinedRoot, isConfinementAvailable } from "../src/index.js";
import { createEgressCertificateAuthority } from "../src/egress-ca.js";
import { type EgressHttpHandler, startEgressProxy } from "../src/egress-proxy.js";

/** Sends `CONNECT authority` on the proxy socket; resolves with the status line and the socket. */
function tunnel(
  socketPath: string,
  authority: string,
): Promise<{ status: number; socket: import("node:net").Socket }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(socketPath, () =>
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`),
    );
    let head = "";
    const onData = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      resolve({ status: Number(head.split(" ")[1]), socket });
    };
    socket.on("data", onData);
    socket.on("error", reject);
  });
}

/** One HTTPS request through an established tunnel, trusting only `ca`; the raw answer. */
function overTls(
  socket: import("node:net").Socket,
  servername: string,
  ca: string,
  request: string,
): Promise<{ answer: string; peer: string }> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, servername, ca }, () => tls.write(request));
    let answer = "";
    tls.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    tls.on("end", () => resolve({ answer, peer: String(tls.getPeerCertificate().subject?.CN) }));
    tls.on("error", reject);
  });
}

describe("egress proxy HTTPS interception", () => {
  const authority = createEgressCertificateAuthority();

  it("terminates TLS for an intercepted host and hands the handler an https URL set from the CONNECT target", async () => {
    const seen: { url: string; host: string | undefined; auth: string | undefined }[] = [];
    const handleHttp: EgressHttpHandler = (request, response) => {
      seen.push({
        url: request.url ?? "",
        host: request.headers.host,
        auth: request.headers.authorization,
      });
      response.writeHead(200, { "content-type": "text/plain" }).end("handled inside TLS");
    };
    const proxy = await startEgressProxy({
      handleHttp,
      https: { authority, intercepts: (host, port) => host === "allowed.example" && port === 443 },
    });
    try {
      const { status, socket } = await tunnel(proxy.socketPath, "allowed.example:443");
      expect(status).toBe(200);
      const { answer, peer } = await overTls(
        socket,
        "allowed.example",
        authority.certificatePem,
        "GET /v1/things?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n",
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect(answer).toContain("handled inside TLS");
      expect(peer).toBe("allowed.example");
      // The Host header cannot redirect the request: the URL comes from what the proxy agreed to intercept.
      expect(seen).toEqual([
        {
          url: "https://allowed.example/v1/things?q=1",
          host: "elsewhere.example",
          auth: undefined,
        },
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("refuses CONNECT to a host it does not intercept, and every CONNECT without interception", async () => {
    const handleHttp: EgressHttpHandler = (_request, response) =>
      response.end("should not be reached");
    const withHttps = await startEgressProxy({
      handleHttp,
      https: { authority, intercepts: (host) => host === "allowed.example" },
    });
    const without = await startEgressProxy({ handleHttp });
    try {
      const denied = await tunnel(withHttps.socketPath, "unlisted.example:443");
      expect(denied.status).toBe(403);
      denied.socket.destroy();
      const none = await tunnel(without.socketPath, "allowed.example:443");
      expect(none.status).toBe(403);
      none.socket.destroy();
      expect(withHttps.refused).toEqual(["unlisted.example:443"]);
    } finally {
      await withHttps.close();
      await without.close();
    }
  });

  it("mints one leaf per host, cached, that a client trusting another CA rejects", async () => {
    expect(authority.secureContextFor("a.example")).toBe(authority.secureContextFor("A.example"));
    expect(authority.secureContextFor("a.example")).not.toBe(
      authority.secureContextFor("b.example"),
    );
    const other = createEgressCertificateAuthority();
    const handleHttp: EgressHttpHandler = (_request, response) => response.end("no");
    const proxy = await startEgressProxy({
      handleHttp,
      https: { authority, intercepts: () => true },
    });
    try {
      const { socket } = await tunnel(proxy.socketPath, "a.example:443");
      await expect(
        overTls(
          socket,
          "a.example",
          other.certificatePem,
          "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n",
        ),
      ).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    } finally {
      await proxy.close();
    }
  });

  it("refuses bad options with invalid_config", () => {
    for (const options of [{ validDays: 0 }, { commonName: "" }, { keyPath: "/tmp/ca.key" }]) {
      let caught: unknown;
      try {
        createEgressCertificateAuthority(options as never);
      } catch (error) {
        caught = error;
      }
      expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
    }
  });

  it("never puts a private key in what it hands out", () => {
    expect(authority.certificatePem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(authority.certificatePem).not.toMatch(/PRIVATE KEY/);
    expect(Object.keys(authority).sort()).toEqual(["certificatePem", "secureContextFor"]);
  });

  it.skipIf(!isConfinementAvailable())(
    "refuses egressHttps without the handler its requests would go to",
    async () => {
      const caught = await createConfinedRoot({
        tree: "/nonexistent-oma-tree",
        mounts: {},
        network: "none",
        egressHttps: { authority, intercepts: () => true },
      }).catch((error: unknown) => error);
      expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
    },
  );
});
