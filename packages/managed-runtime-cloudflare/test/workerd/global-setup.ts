import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import { createLocalContainerServer } from "@open-managed-agents/local-container";
import {
  type HostSentinels,
  plantHostSentinels,
} from "@open-managed-agents/local-container/testing";
import { startLocalControlPlane } from "@open-managed-agents/local-control-plane";
import type { TestProject } from "vitest/node";
import { startEgressRelay } from "./relay-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    containerServerUrl: string;
    containerControlToken: string;
    upstreamUrl: string;
    relayUrl: string;
    controlPlaneUrl: string;
    controlPlaneAdminToken: string;
    amaWorkerBinDirectory: string;
    containerConfinement: string;
    containerMaxFileBytes: number;
    hostSentinels: HostSentinelFacts;
    hostChangesUrl: string;
  }
}

/** What the hostile-command probes need to know of the host sentinels (workerd cannot read host files). */
export type HostSentinelFacts = Pick<
  HostSentinels,
  "tag" | "etcFile" | "rootFile" | "hostOnlyDir" | "secret" | "hostPid"
>;

/** The containers' file-size bound: small enough that a probe can write past it cheaply. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * An upstream service that echoes what reached it, so tests can see which headers the egress path set.
 * Like a real service it never sends a credential back: the Authorization header comes back as a digest.
 */
function echo(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const { authorization, ...headers } = request.headers;
    const authorizationSha256 =
      typeof authorization === "string"
        ? createHash("sha256").update(authorization).digest("hex")
        : null;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        method: request.method,
        url: request.url,
        headers,
        authorizationSha256,
        body: Buffer.concat(chunks).toString("utf8"),
      }),
    );
  });
}

/**
 * Host files a probe may have made: the probes name what they write with the sentinels' tag, so any such
 * name under `/`, `/etc` or `/root` that is not a sentinel, or anything beside the host-only secret, came
 * from a container.
 */
function strayHostFiles(host: HostSentinels): string[] {
  const planted = new Set([host.etcFile, host.rootFile]);
  const tagged = ["/", "/etc", "/root"].flatMap((dir) =>
    readdirSync(dir)
      .filter((name) => name.includes(host.tag))
      .map((name) => join(dir, name)),
  );
  // A missing host-only directory is already a change (its secret is gone).
  const beside = listOrEmpty(host.hostOnlyDir)
    .filter((name) => name !== "secret")
    .map((name) => join(host.hostOnlyDir, name));
  return [...tagged.filter((path) => !planted.has(path)), ...beside].map(
    (path) => `${path} appeared on the host`,
  );
}

function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const rootDir = await mkdtemp(join("/var/tmp", "oma-cf-containers-"));
  // The AMA worker an ama_worker profile names, where the confined containers see it and on their PATH.
  const binDirectory = dirname(await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR));
  process.env.PATH = `${binDirectory}:${process.env.PATH ?? ""}`;
  // The host's network by name: these containers stand in for Cloudflare's, which reach the internet, and
  // reach the local control plane the way a Cloudflare container reaches Managed Agents.
  const containers = await createLocalContainerServer({
    rootDir,
    network: "host-unsafe",
    limits: { maxFileBytes: MAX_FILE_BYTES },
  });
  // Host files, a host-only secret and a host process the hostile-command probes aim at; the test asks
  // this server (GET) what changed since they were planted, since workerd cannot look at the host itself.
  const host = plantHostSentinels({ hostOnlyParent: "/var/tmp" });
  const sentinelServer = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify([...host.changes(), ...strayHostFiles(host)]));
  });
  await new Promise<void>((resolve) => sentinelServer.listen(0, "127.0.0.1", resolve));
  project.provide("containerConfinement", containers.confinement);
  project.provide("containerMaxFileBytes", MAX_FILE_BYTES);
  project.provide("hostSentinels", {
    tag: host.tag,
    etcFile: host.etcFile,
    rootFile: host.rootFile,
    hostOnlyDir: host.hostOnlyDir,
    secret: host.secret,
    hostPid: host.hostPid,
  });
  project.provide(
    "hostChangesUrl",
    `http://127.0.0.1:${(sentinelServer.address() as AddressInfo).port}`,
  );
  // The Managed Agents stand-in claimed work comes from; containers reach it over the shared network.
  const plane = await startLocalControlPlane();
  project.provide("controlPlaneUrl", plane.url);
  project.provide("controlPlaneAdminToken", plane.adminToken);
  project.provide("amaWorkerBinDirectory", binDirectory);
  const upstream = createServer(echo);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  project.provide("containerServerUrl", containers.url);
  project.provide("containerControlToken", containers.controlToken);
  project.provide("upstreamUrl", `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  const relay = await startEgressRelay();
  project.provide("relayUrl", relay.url);
  return async () => {
    await plane.stop();
    await relay.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await containers.close();
    sentinelServer.closeAllConnections();
    await new Promise<void>((resolve) => sentinelServer.close(() => resolve()));
    host.remove();
    await rm(rootDir, { recursive: true, force: true });
  };
}
