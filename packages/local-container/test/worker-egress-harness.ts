/**
 * What the Worker-routed egress tests share: a real server in a temporary root, exec into its containers,
 * and a local HTTP upstream on the host's loopback that the handlers forward to (standing in for the internet).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { type RequestListener, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalContainerServer, createLocalContainerServer } from "../src/server/server.js";
import { authorizedFetch } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";

export interface EgressHarness {
  readonly server: LocalContainerServer;
  /** The upstream's port on 127.0.0.1. */
  readonly upstreamPort: number;
  /** The server's root directory on the host. */
  readonly rootDir: string;
  /** Runs `command` in container `id`; stdout then stderr. */
  exec(id: string, command: string): Promise<string>;
  /** start() is fire-and-forget, as in workerd: waits until the server has the container. */
  started(id: string): Promise<void>;
  close(): Promise<void>;
}

export async function startEgressHarness(
  prefix: string,
  upstreamListener: RequestListener,
): Promise<EgressHarness> {
  const upstream = createServer(upstreamListener);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const rootDir = await mkdtemp(join(tmpdir(), prefix));
  const server = await createLocalContainerServer({ rootDir });
  return {
    server,
    rootDir,
    upstreamPort: (upstream.address() as AddressInfo).port,
    async exec(id, command) {
      const response = await authorizedFetch(server, `${server.url}/api/execute`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Oma-Container-Id": id },
        body: JSON.stringify({ command, sessionId: SESSIONLESS }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      return `${String(body.stdout)}${String(body.stderr)}`;
    },
    async started(id) {
      for (let tries = 0; tries < 600 && server.containers.get(id) === undefined; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async close() {
      await server.close();
      await rm(rootDir, { recursive: true, force: true });
      upstream.closeAllConnections();
      upstream.close();
    },
  };
}
