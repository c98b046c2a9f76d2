/**
 * The server's confinement option: bubblewrap by default, the unconfined mode only by its name, the
 * network option, and the mode in force readable on the server object.
 */
import { existsSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, describe, expect, it } from "vitest";
import { type LocalContainerServerOptions, createLocalContainerServer } from "../src/index.js";
import { type TestServer, startTestServer, authorizedFetch } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";

/** Whether Debian's mirror answers (the apt probe needs it; offline machines skip it). */
async function mirrorReachable(): Promise<boolean> {
  try {
    return (
      await fetch("http://deb.debian.org/debian/", {
        method: "HEAD",
        signal: AbortSignal.timeout(5_000),
      })
    ).ok;
  } catch {
    return false;
  }
}
const aptProbe = existsSync("/etc/apt") && (await mirrorReachable());
let harness: TestServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const run = async (id: string, command: string): Promise<Record<string, unknown>> =>
  (
    await (harness as TestServer).json(id, "POST", "/api/execute", {
      command,
      sessionId: SESSIONLESS,
    })
  ).body;

describe("confinement option", () => {
  it("defaults to bubblewrap and says so; commands of one container share its PID namespace", async () => {
    harness = await startTestServer();
    expect(harness.server.confinement).toBe("bubblewrap");
    expect(harness.server.network).toBe("none");
    await harness.start("conf");
    const first = await run(
      "conf",
      "readlink /proc/self/ns/pid; sleep 30 >/dev/null 2>&1 & echo $!",
    );
    const [namespace, sleeper] = String(first.stdout).trim().split("\n");
    expect(namespace).not.toBe(readlinkSync("/proc/self/ns/pid"));
    const second = await run(
      "conf",
      `readlink /proc/self/ns/pid; kill -0 ${sleeper} && echo sees-it; kill ${sleeper}`,
    );
    expect(second.stdout).toBe(`${namespace}\nsees-it\n`);
  });

  it("runs unconfined only when asked for by name, and says so", async () => {
    harness = await startTestServer({}, "namespace");
    expect(harness.server.confinement).toBe("unconfined-unsafe");
    expect(harness.server.network).toBe("host-unsafe");
    await harness.start("open");
    expect(String((await run("open", "readlink /proc/self/ns/pid")).stdout).trim()).toBe(
      readlinkSync("/proc/self/ns/pid"),
    );
  });

  it.skipIf(!aptProbe)(
    "an apt-get install through an allow-list succeeds and lands in the container's tree, never the host's",
    async () => {
      // Containers have no network by default; the deployer lets the package mirror through the proxy (apt honours http_proxy).
      harness = await startTestServer({}, "auto", tmpdir(), {
        egressAllowList: ["deb.debian.org"],
      });
      await harness.start("apt");
      const result = await run(
        "apt",
        "apt-get install -y -q sl >/dev/null 2>&1; test -x /usr/games/sl && echo installed",
      );
      expect(result.stdout).toBe("installed\n");
      expect(existsSync("/usr/games/sl")).toBe(false);
      expect(existsSync(join(harness.rootDir, "apt", "upper", "usr", "games", "sl"))).toBe(true);
    },
    180_000,
  );

  it('network "none" leaves only a loopback interface', async () => {
    const rootDir = await mkdtemp(join(tmpdir(), "oma-local-container-net-"));
    const server = await createLocalContainerServer({ rootDir, network: "none" });
    try {
      expect(server.network).toBe("none");
      await authorizedFetch(server, `${server.url}/__oma/containers/offline`, {
        method: "PUT",
        body: "{}",
      });
      const response = await authorizedFetch(server, `${server.url}/api/execute`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "offline" },
        body: JSON.stringify({
          command: `ls /sys/class/net 2>/dev/null || cat /proc/net/dev | tail -n +3 | cut -d: -f1; exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo reached || echo unreachable`,
          sessionId: SESSIONLESS,
        }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      expect(String(body.stdout).replace(/\s+/g, " ").trim()).toBe("lo unreachable");
      expect(readlinkSync(`/proc/${server.containers.get("offline")?.root?.pid}/ns/net`)).not.toBe(
        readlinkSync("/proc/self/ns/net"),
      );
    } finally {
      await server.close();
      await rm(rootDir, { recursive: true, force: true });
    }
  });

  it("with an egress allow-list, the filtering proxy is the only way out", async () => {
    const allowedApp = createServer((_request, response) => response.end("allowed answer"));
    const otherApp = createServer((_request, response) => response.end("must not be reached"));
    await Promise.all(
      [allowedApp, otherApp].map(
        (app) => new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve)),
      ),
    );
    const portOf = (app: typeof allowedApp): number => (app.address() as AddressInfo).port;
    const rootDir = await mkdtemp(join(tmpdir(), "oma-local-container-egress-"));
    const server = await createLocalContainerServer({
      rootDir,
      network: "none",
      egressAllowList: [`127.0.0.1:${portOf(allowedApp)}`],
    });
    try {
      await authorizedFetch(server, `${server.url}/__oma/containers/egress`, {
        method: "PUT",
        body: "{}",
      });
      // Requests go to the proxy address HTTP_PROXY names, with bash's /dev/tcp: no client setting can change the outcome.
      const viaProxy = (port: number): string =>
        `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3; { cat <&3; echo; } | tr -d '\r' | awk NF | sed -n '1p;$p'`;
      const direct = (port: number): string =>
        `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo direct-reached || echo direct-refused`;
      const command = [
        viaProxy(portOf(allowedApp)),
        viaProxy(portOf(otherApp)),
        direct(portOf(allowedApp)),
        direct(server.port),
      ].join("; ");
      const response = await authorizedFetch(server, `${server.url}/api/execute`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "egress" },
        body: JSON.stringify({ command: command, sessionId: SESSIONLESS }),
      });
      const lines = String(((await response.json()) as Record<string, unknown>).stdout)
        .trim()
        .split("\n");
      expect(lines).toEqual([
        "HTTP/1.1 200 OK",
        "allowed answer",
        "HTTP/1.1 403 Forbidden",
        `egress to 127.0.0.1:${portOf(otherApp)} is not allowed`,
        "direct-refused",
        "direct-refused",
      ]);
      expect(server.containers.get("egress")?.root?.egress?.refused).toEqual([
        `127.0.0.1:${portOf(otherApp)}`,
      ]);
      const env = await authorizedFetch(server, `${server.url}/api/execute`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "egress" },
        body: JSON.stringify({ command: 'echo "$HTTPS_PROXY"', sessionId: SESSIONLESS }),
      });
      expect(((await env.json()) as Record<string, unknown>).stdout).toBe(
        "http://127.0.0.1:3128\n",
      );
    } finally {
      await server.close();
      await rm(rootDir, { recursive: true, force: true });
      allowedApp.close();
      otherApp.close();
    }
  });

  it("refuses combinations that would weaken what was asked for, naming the field", async () => {
    const cases: [Partial<LocalContainerServerOptions>, string][] = [
      [{ pathMapping: "rewrite" }, "pathMapping"],
      [{ confinement: "unconfined-unsafe", network: "none" }, "network"],
      [{ confinement: "none" as never }, "confinement"],
      [{ egressAllowList: ["example.com"], network: "host-unsafe" }, "egressAllowList"],
    ];
    for (const [options, field] of cases) {
      const error = await createLocalContainerServer({
        rootDir: join(tmpdir(), "never-created"),
        ...options,
      }).catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "invalid_config")).toBe(true);
      expect((error as ManagedRuntimeError).context).toMatchObject({ field });
    }
  });
});
