/**
 * Starts the plugin Worker in local workerd (Miniflare) over a local container server started here, plus a
 * small HTTP server that stands in for an application listening on port 8080 inside each instance.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import {
  type LocalContainerServer,
  createLocalContainerServer,
} from "@open-managed-agents/local-container";
import { Log, LogLevel, Miniflare } from "miniflare";
import { inject } from "vitest";

/** Images the test configuration serves: two classes for the default image, one for a small image. */
export const IMAGE = "docker.io/cloudflare/sandbox:0.12.10";
export const SMALL_IMAGE = "registry.example/small:1";
export const TEST_CLASSES = [
  { binding: "SANDBOX_STANDARD_1", image: IMAGE, instanceType: "standard-1" },
  { binding: "SANDBOX_STANDARD_4", image: IMAGE, instanceType: "standard-4" },
  { binding: "SANDBOX_BASIC", image: SMALL_IMAGE, instanceType: "basic" },
];
/** Largest file body the test Worker accepts. */
export const TEST_MAX_FILE_BYTES = 256 * 1024;

export interface Harness {
  readonly url: string;
  readonly token: string;
  readonly containers: LocalContainerServer;
  readonly miniflare: Miniflare;
  /** Local container id (the Durable Object id) of a sandbox in the namespace bound as `binding`. */
  containerIdOf(binding: string, sandboxId: string): Promise<string>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Bindings replacing or (with undefined) removing the defaults. */
  readonly bindings?: Readonly<Record<string, unknown>>;
}

/** Echoes method, path, headers and body as JSON: the stand-in for an application on port 8080. */
function echo(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json", "x-app": "echo" });
    response.end(
      JSON.stringify({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      }),
    );
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const rootDir = await mkdtemp(join("/var/tmp", "oma-plugin-containers-"));
  const containers = await createLocalContainerServer({ rootDir });
  const app = createServer(echo);
  const appUrl = await listen(app);
  const token = randomBytes(24).toString("hex");
  const scriptPath = inject("workerBundle");
  const bindings: Record<string, unknown> = {
    PLUGIN_TOKEN: token,
    SANDBOX_CLASSES: TEST_CLASSES,
    INSTANCE_START_TIMEOUT_MS: "1500",
    PORT_READY_TIMEOUT_MS: "15000",
    MAX_FILE_BYTES: String(TEST_MAX_FILE_BYTES),
    SANDBOX_LOG_LEVEL: "error",
    OMA_TEST_CONTAINER_URL: containers.url,
    OMA_TEST_CONTAINER_TOKEN: containers.controlToken,
    OMA_TEST_APP_URL: appUrl,
  };
  for (const [name, value] of Object.entries(options.bindings ?? {})) {
    if (value === undefined) delete bindings[name];
    else bindings[name] = value;
  }
  const miniflare = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: {
      SANDBOX_STANDARD_1: { className: "SandboxStandard1", useSQLite: true },
      SANDBOX_STANDARD_4: { className: "SandboxStandard4", useSQLite: true },
      SANDBOX_BASIC: { className: "SandboxBasic", useSQLite: true },
      SANDBOX_REGISTRY: { className: "SandboxRegistry", useSQLite: true },
    },
    bindings: bindings as Record<string, string>,
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  const url = (await miniflare.ready).origin;
  return {
    url,
    token,
    containers,
    miniflare,
    async containerIdOf(binding, sandboxId) {
      const namespace = await miniflare.getDurableObjectNamespace(binding);
      return namespace.idFromName(sandboxId).toString();
    },
    async stop() {
      await miniflare.dispose();
      app.closeAllConnections();
      await new Promise<void>((resolve) => app.close(() => resolve()));
      await containers.close();
      await rm(rootDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` every 100 ms until it holds or `timeoutMs` passes. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}
