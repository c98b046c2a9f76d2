import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { DEFAULT_AMA_WORKER_BIN_DIRECTORY, installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import { createLocalContainerServer } from "@open-managed-agents/local-container";
import { startLocalControlPlane } from "@open-managed-agents/local-control-plane";
import type { TestProject } from "vitest/node";
import { startEgressRelay } from "./relay-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    containerServerUrl: string;
    upstreamUrl: string;
    relayUrl: string;
    controlPlaneUrl: string;
    controlPlaneAdminToken: string;
    amaWorkerBinDirectory: string;
  }
}

/**
 * An upstream service that echoes what reached it, so tests can see which headers the egress path set.
 * Like a real service it never sends a credential back: the Authorization header comes back as a digest.
 */
function echo(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const { authorization, ...headers } = request.headers;
    const authorizationSha256 = typeof authorization === "string" ? createHash("sha256").update(authorization).digest("hex") : null;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ method: request.method, url: request.url, headers, authorizationSha256, body: Buffer.concat(chunks).toString("utf8") }));
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const rootDir = await mkdtemp(join("/var/tmp", "oma-cf-containers-"));
  // The AMA worker an ama_worker profile names, where the confined containers see it and on their PATH.
  const binDirectory = process.env.OMA_AMA_WORKER_BIN_DIR ?? DEFAULT_AMA_WORKER_BIN_DIRECTORY;
  await installAmaWorkerBin(binDirectory);
  process.env.PATH = `${binDirectory}:${process.env.PATH ?? ""}`;
  const containers = await createLocalContainerServer({ rootDir });
  // The Managed Agents stand-in claimed work comes from; containers reach it over the shared network.
  const plane = await startLocalControlPlane();
  project.provide("controlPlaneUrl", plane.url);
  project.provide("controlPlaneAdminToken", plane.adminToken);
  project.provide("amaWorkerBinDirectory", binDirectory);
  const upstream = createServer(echo);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  project.provide("containerServerUrl", containers.url);
  project.provide("upstreamUrl", `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  const relay = await startEgressRelay();
  project.provide("relayUrl", relay.url);
  return async () => {
    await plane.stop();
    await relay.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await containers.close();
    await rm(rootDir, { recursive: true, force: true });
  };
}
