/**
 * A hostile tenant on the default settings: from inside one container, every way to reach the server's
 * control API, another container's tree or a secret of the host is tried, and every one must be blocked.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalContainerServer } from "../src/server/server.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type TestServer, authorizedFetch, controlHeaders, startTestServer } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
const secret = `victim-secret-${randomBytes(12).toString("hex")}`;
const hostSecret = `host-secret-${randomBytes(12).toString("hex")}`;
let harness: TestServer;
/** A service of the host on its loopback, as the bridge, a control plane or a database listens. */
let hostService: Server;
const hostPort = (): number => (hostService.address() as AddressInfo).port;

const script = (name: string): Promise<string> =>
  readFile(join(import.meta.dirname, "hostile", name), "utf8");

async function runIn(id: string, command: string, env: Record<string, string>): Promise<string> {
  const { status, body } = await harness.json(id, "POST", "/api/execute", {
    command,
    sessionId: SESSIONLESS,
    env,
  });
  expect(status).toBe(200);
  return String(body.stdout);
}

beforeAll(async () => {
  // A credential in the host's environment: no container may see it anywhere.
  process.env.OMA_HOSTILE_TEST_KEY = hostSecret;
  hostService = createServer((_request, response) => response.end("host service"));
  await new Promise<void>((resolve) => hostService.listen(0, "127.0.0.1", resolve));
  harness = await startTestServer();
  await harness.start("victim");
  await harness.start("attacker");
  await runIn("victim", `printf '%s' '${secret}' > /workspace/secret.txt`, {});
});
afterAll(async () => {
  delete process.env.OMA_HOSTILE_TEST_KEY;
  await harness.stop();
  hostService.close();
});

describe("a container on the default settings", () => {
  it("cannot use the control API: no call without the token gets an answer of the server's", async () => {
    const output = await runIn("attacker", await script("control-api-probes.sh"), {
      OMA_PROBE_URL: harness.server.url,
      OMA_PROBE_VICTIM: "victim",
    });
    const results = Object.fromEntries(
      output
        .trim()
        .split("\n")
        .map((line) => line.split(" ") as [string, string]),
    );
    expect(Object.keys(results).sort()).toEqual([
      "answer",
      "collect",
      "create",
      "delete",
      "exec",
      "forged",
      "list",
      "probe",
      "read",
    ]);
    // 000: nothing answered (no route to the server); 401: the server refused. Never a 2xx or a 404.
    for (const [probe, status] of Object.entries(results))
      expect({ probe, status }).toEqual({ probe, status: expect.stringMatching(/^(000|401)$/) });
    // The victim is untouched and no container was created.
    expect(
      harness.server.containers
        .list()
        .map((container) => container.id)
        .sort(),
    ).toEqual(["attacker", "victim"]);
    expect(await runIn("victim", "cat /workspace/secret.txt", {})).toBe(secret);
  }, 120_000);

  it("reaches no service of the host and no port of another container", async () => {
    // The peer listens on its own loopback; with the host's network every container would share it.
    await runIn(
      "victim",
      '(exec -a oma-peer-listener node -e \'require("net").createServer((s) => s.end("peer")).listen(4555)\' >/dev/null 2>&1 &) ; sleep 1',
      {},
    );
    const probe = (port: number): string =>
      `curl -s -o /dev/null -w '%{http_code}\\n' --max-time 5 http://127.0.0.1:${port}/ || true`;
    const output = await runIn(
      "attacker",
      [
        probe(hostPort()),
        probe(harness.server.port),
        "(exec 3<>/dev/tcp/127.0.0.1/4555) 2>/dev/null && echo peer-reached || echo peer-refused",
      ].join("; "),
      {},
    );
    expect(output.trim().split("\n")).toEqual(["000", "000", "peer-refused"]);
    expect(harness.server.network).toBe("none");
  }, 120_000);

  it("finds no other container's files and no secret of the host", async () => {
    const tree = harness.server.containers.get("victim")?.directory as string;
    for (const probeSecret of [secret, hostSecret]) {
      const output = await runIn("attacker", await script("neighbour-probes.sh"), {
        OMA_PROBE_TREE: tree,
        OMA_PROBE_SECRET_B64: Buffer.from(probeSecret).toString("base64"),
      });
      expect(output.trim().split("\n")).toEqual([
        "tree-path blocked",
        "proc-root blocked",
        "proc-environ blocked",
        "proc-cmdline blocked",
        "disk blocked",
      ]);
    }
  }, 120_000);
});

describe('network "host-unsafe", asked for by name', () => {
  it("gives up that isolation: the same probe reaches the host's service", async () => {
    const rootDir = await mkdtemp(join(tmpdir(), "oma-hostile-host-network-"));
    const server = await createLocalContainerServer({ rootDir, network: "host-unsafe" });
    try {
      const headers = {
        "Content-Type": "application/json",
        "X-Oma-Container-Id": "open",
        ...controlHeaders(server),
      };
      await fetch(`${server.url}/__oma/containers/open`, { method: "PUT", headers, body: "{}" });
      const response = await fetch(`${server.url}/api/execute`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          command: `curl -s --max-time 5 http://127.0.0.1:${hostPort()}/`,
          sessionId: SESSIONLESS,
        }),
      });
      expect(((await response.json()) as Record<string, unknown>).stdout).toBe("host service");
    } finally {
      await server.close();
      await rm(rootDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("the control API", () => {
  it("refuses every call without the token, with a wrong one, or with another scheme (401 UNAUTHORIZED)", async () => {
    const url = `${harness.server.url}/__oma/containers`;
    const attempts: Record<string, string>[] = [
      {},
      { "X-Oma-Control-Token": "Bearer wrong" },
      { "X-Oma-Control-Token": harness.server.controlToken },
      { Authorization: `Bearer ${harness.server.controlToken}` },
    ];
    for (const headers of attempts) {
      const response = await fetch(url, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED", httpStatus: 401 });
    }
    const probe = await fetch(`${harness.server.url}/`);
    expect(probe.status).toBe(401);
    await probe.body?.cancel();
    const accepted = await authorizedFetch(harness.server, url);
    expect(accepted.status).toBe(200);
    await accepted.body?.cancel();
  });

  it("refuses a WebSocket upgrade without the token", async () => {
    const socket = new WebSocket(`${harness.server.url.replace("http", "ws")}/ws`, {
      headers: { "X-Oma-Container-Id": "victim" },
    });
    const refusal = await new Promise<string>((resolve) => {
      socket.once("unexpected-response", (_request, response) =>
        resolve(String(response.statusCode)),
      );
      socket.once("open", () => resolve("open"));
      socket.once("error", (error) => resolve(error.message));
    });
    socket.terminate();
    expect(refusal).toBe("401");
  });

  it("takes a token of its own per server", async () => {
    const other = await startTestServer();
    try {
      expect(other.server.controlToken).not.toBe(harness.server.controlToken);
      expect(other.server.controlToken).toMatch(/^[0-9a-f]{64}$/);
      const crossed = await authorizedFetch(harness.server, `${other.server.url}/__oma/containers`);
      expect(crossed.status).toBe(401);
      await crossed.body?.cancel();
    } finally {
      await other.stop();
    }
  });
});
