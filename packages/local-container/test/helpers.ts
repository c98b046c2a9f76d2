import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalContainerServer, createLocalContainerServer } from "../src/server/server.js";
import type {
  LocalContainerLimits,
  LocalContainerServerOptions,
  PathMapping,
} from "../src/server/options.js";

/** The control token header every call to `server` needs. */
export function controlHeaders(
  server: Pick<LocalContainerServer, "controlToken">,
): Record<string, string> {
  return { "X-Oma-Control-Token": `Bearer ${server.controlToken}` };
}

export interface TestServer {
  readonly server: LocalContainerServer;
  readonly rootDir: string;
  /** Calls a container-scoped route with the container header. */
  call(containerId: string, method: string, path: string, body?: unknown): Promise<Response>;
  /** Calls and parses a JSON answer. */
  json(
    containerId: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Creates a container through the lifecycle route. */
  start(containerId: string, env?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a server on a free port with its own root directory under `rootParent`. An explicit path mapping
 * is a mode of unconfined containers, so it starts the server `unconfined-unsafe`; `auto` confines.
 */
export async function startTestServer(
  limits: Partial<LocalContainerLimits> = {},
  pathMapping: PathMapping = "auto",
  rootParent = tmpdir(),
  extra: Pick<LocalContainerServerOptions, "network" | "egressAllowList"> = {},
): Promise<TestServer> {
  const rootDir = await mkdtemp(join(rootParent, "oma-local-container-test-"));
  const confinement = pathMapping === "auto" ? "bubblewrap" : "unconfined-unsafe";
  const server = await createLocalContainerServer({
    rootDir,
    limits,
    pathMapping,
    confinement,
    ...extra,
  });
  const call = (
    containerId: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method,
      headers: {
        "Content-Type": "application/json",
        "X-Oma-Container-Id": containerId,
        ...controlHeaders(server),
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return {
    server,
    rootDir,
    call,
    async json(containerId, method, path, body) {
      const response = await call(containerId, method, path, body);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async start(containerId, env = {}) {
      const response = await fetch(`${server.url}/__oma/containers/${containerId}`, {
        method: "PUT",
        headers: controlHeaders(server),
        body: JSON.stringify({ env }),
      });
      if (!response.ok)
        throw new Error(`container start failed: ${response.status} ${await response.text()}`);
    },
    async stop() {
      await server.close();
      await rm(rootDir, { recursive: true, force: true });
    },
  };
}

/** Splits an SSE body of `data: {json}\n\n` frames into parsed frames. */
export function parseDataFrames(text: string): Record<string, unknown>[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.length > 0)
    .map((frame) => {
      if (!frame.startsWith("data: ")) throw new Error(`not a data frame: ${frame}`);
      return JSON.parse(frame.slice("data: ".length)) as Record<string, unknown>;
    });
}

/** Replaces ISO timestamps so byte-for-byte comparisons ignore the clock. */
export function maskTimestamps(text: string): string {
  return text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, "<ts>");
}

/** True while a process with this pid runs (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * Host pid of a process a confined container's command reported (`$$`, `$!`: pids of the container's
 * own PID namespace); an unconfined container's pids are host pids already. -1 when no such process is
 * left, which `isAlive` reports as gone.
 */
export function hostPidOf(harness: TestServer, containerId: string, containerPid: number): number {
  const root = harness.server.containers.get(containerId)?.root;
  if (root === undefined) return containerPid;
  const namespace = readlinkSync(`/proc/${root.pid}/ns/pid`);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nsPids = /^NSpid:\s+(.*)$/m
        .exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1]
        ?.trim()
        .split(/\s+/);
      if (
        nsPids?.at(-1) === String(containerPid) &&
        readlinkSync(`/proc/${entry}/ns/pid`) === namespace
      )
        return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return -1;
}

/** Polls `check` until it is true or `timeoutMs` passed. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

/** `fetch` to the server with its control token (every call needs it). */
export function authorizedFetch(
  server: Pick<LocalContainerServer, "controlToken">,
  url: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(controlHeaders(server))) headers.set(name, value);
  return fetch(url, { ...init, headers });
}
