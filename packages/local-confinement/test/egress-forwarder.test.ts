/**
 * A container with no network and an allow-list: its first process is the egress forwarder (a program
 * bundled from src/programs/), the only way from the container's loopback to the proxy on the host.
 */
import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConfinedRoot, createConfinedRoot, isConfinementAvailable } from "../src/index.js";
import { run } from "./helpers.js";

/** A GET through `proxy` (host:port) for `url`, printed as `<status> <body>`, or `error <code>`. */
const FETCH = `
const [proxy, url] = process.argv.slice(1);
const [host, port] = proxy.split(":");
const request = require("node:http").get({ host, port: Number(port), path: url }, (response) => {
  let body = "";
  response.on("data", (chunk) => (body += chunk));
  response.on("end", () => console.log(response.statusCode, body.trim()));
});
request.on("error", (error) => console.log("error", error.code));
`;

describe.skipIf(!isConfinementAvailable())("the egress forwarder", () => {
  let tree: string;
  let server: Server;
  let port: number;
  let root: ConfinedRoot;
  const fetchIn = async (proxy: string, url: string) =>
    (
      await run(root.spawn({ command: process.execPath, args: ["-e", FETCH, proxy, url], env: {} }))
    ).stdout.trim();

  beforeAll(async () => {
    tree = await mkdtemp(join(tmpdir(), "oma-forwarder-test-"));
    mkdirSync(join(tree, "workspace"));
    server = createServer((_request, response) => response.end("hello from the host"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    root = await createConfinedRoot({
      tree,
      mounts: { "/workspace": join(tree, "workspace") },
      network: "none",
      egressAllowList: [`127.0.0.1:${port}`],
    });
  });
  afterAll(async () => {
    root?.dispose();
    await root?.ended;
    server?.close();
    await rm(tree, { recursive: true, force: true });
  });

  it("is the container's first process and carries an allowed request to the host", async () => {
    const first = await run(
      root.spawn({ command: "sh", args: ["-c", "tr '\\0' ' ' < /proc/1/cmdline"], env: {} }),
    );
    expect(first.stdout).toContain("egress forwarder: <socket path> <port> expected");
    expect(await fetchIn("127.0.0.1:3128", `http://127.0.0.1:${port}/`)).toBe(
      "200 hello from the host",
    );
  });

  it("leaves the proxy's refusals to the proxy, and the host's loopback out of reach without it", async () => {
    expect(await fetchIn("127.0.0.1:3128", "http://127.0.0.1:1/")).toMatch(
      /^403 egress to 127\.0\.0\.1:1 is not allowed/,
    );
    expect(root.egress?.refused).toContain("127.0.0.1:1");
    expect(await fetchIn(`127.0.0.1:${port}`, `http://127.0.0.1:${port}/`)).toBe(
      "error ECONNREFUSED",
    );
  });
});
