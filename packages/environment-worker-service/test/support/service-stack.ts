import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  type LocalControlPlane,
  type LocalControlPlaneOptions,
  startLocalControlPlane,
} from "@open-managed-agents/local-control-plane";

export const BIN = fileURLToPath(new URL("../../dist/bin.js", import.meta.url));

/** One JSON log line of the service. */
export interface LogLine {
  readonly level: number;
  readonly event?: string;
  readonly [field: string]: unknown;
}

/** A started `oma-environment-worker` child process. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  /** Everything the process wrote, raw (for secret scans). */
  output(): string;
  /** Resolves with the first line of `event` (and matching `where`), waiting for it. */
  waitFor(event: string, where?: (line: LogLine) => boolean): Promise<LogLine>;
  /** The HTTP listener's URL, from the `service.started` line. */
  httpUrl(): Promise<string>;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/**
 * The pieces a deployer runs, all real: the local control plane (stand-in for Anthropic Managed Agents),
 * Cloudflare's bridge Worker in local workerd over the confined local container runtime, `oma-ama-worker`
 * on the runtime's PATH, and the bin under test as a child process with a SQLite store and a file blob store.
 */
export interface ServiceStack {
  readonly plane: LocalControlPlane;
  readonly bridge: LocalBridge;
  readonly environment: { readonly id: string; readonly environmentKey: string };
  readonly dir: string;
  readonly storePath: string;
  readonly binDirectory: string;
  /** The environment of a correctly configured service. */
  env(overrides?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  start(overrides?: Record<string, string | undefined>, args?: readonly string[]): ServiceProcess;
  /** Runs the bin to its end (for --check, the operator CLI and bad configs). */
  run(
    args: readonly string[],
    overrides?: Record<string, string | undefined>,
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/**
 * With `webhook`, the control plane signs and posts its webhooks to `/webhook` on that port of this host;
 * `plane` passes other options to the control plane (a fleet's shorter work leases).
 */
export async function startServiceStack(
  options: {
    readonly webhook?: { readonly port: number; readonly secret: string };
    readonly plane?: Omit<LocalControlPlaneOptions, "webhook">;
  } = {},
): Promise<ServiceStack> {
  // A directory of this build's own that the confined local runtime sees (the host's /opt, copy-on-write).
  const binDirectory = dirname(await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR));
  // The readiness probe runs with the runtime's own PATH, as a sandbox image's would carry the bin.
  if (!(process.env.PATH ?? "").split(delimiter).includes(binDirectory))
    process.env.PATH = `${binDirectory}${delimiter}${process.env.PATH ?? ""}`;
  const dir = await mkdtemp(join(tmpdir(), "oma-service-"));
  const plane = await startLocalControlPlane({
    ...options.plane,
    ...(options.webhook
      ? {
          webhook: {
            url: `http://127.0.0.1:${options.webhook.port}/webhook`,
            secret: options.webhook.secret,
          },
        }
      : {}),
  });
  // The containers have no network of their own: the filtering proxy lets the control plane's origin through
  // (the API the sandbox's oma-ama-worker calls), as a Cloudflare container reaches the internet.
  const bridge = await startLocalBridge({ egressAllowList: [new URL(plane.url).host] });
  if (bridge.containerServer.confinement !== "bubblewrap")
    throw new Error("the local stack must confine its containers in bubblewrap");
  const environment = plane.createEnvironment({ name: "service-test" });
  const storePath = join(dir, "runtime.sqlite");
  const children = new Set<ChildProcess>();
  const profile = {
    workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: {
        command: "oma-ama-worker",
        env: { PATH: `${binDirectory}:/usr/local/bin:/usr/bin:/bin`, OMA_AMA_MAX_IDLE_MS: "600" },
      },
    },
  };
  const env = (overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(base))
      if (key.startsWith("OMA_") || key.startsWith("R2_") || key.startsWith("AWS_"))
        delete base[key];
    const merged: NodeJS.ProcessEnv = {
      ...base,
      OMA_AMA_WORKER_BIN_DIR: binDirectory,
      OMA_ENVIRONMENT_ID: environment.id,
      OMA_ENVIRONMENT_KEY: environment.environmentKey,
      OMA_API_BASE_URL: plane.url,
      OMA_STORE: `sqlite://${storePath}`,
      OMA_CHECKPOINT_STORE: `file://${join(dir, "blobs")}`,
      OMA_CLOUDFLARE_BRIDGE_URL: bridge.url,
      OMA_CLOUDFLARE_BRIDGE_API_KEY: bridge.apiKey,
      OMA_PROFILE: JSON.stringify(profile),
      OMA_POLL_INTERVAL_MS: "1000",
      OMA_LOG_FORMAT: "json",
      OMA_HTTP_PORT: "0",
      ...overrides,
    };
    for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
    return merged;
  };
  const start = (
    overrides: Record<string, string | undefined> = {},
    args: readonly string[] = [],
  ): ServiceProcess => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: env(overrides),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    const lines: LogLine[] = [];
    const waiters: (() => void)[] = [];
    let raw = "";
    let pending = "";
    const onData = (chunk: Buffer) => {
      raw += chunk.toString();
      pending += chunk.toString();
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const text = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        try {
          lines.push(JSON.parse(text) as LogLine);
        } catch {
          // A line that is not JSON stays in `output()` only.
        }
        newline = pending.indexOf("\n");
      }
      for (const wake of waiters.splice(0)) wake();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => {
        children.delete(child);
        for (const wake of waiters.splice(0)) wake();
        resolve(code);
      }),
    );
    const waitFor = async (
      event: string,
      where: (line: LogLine) => boolean = () => true,
    ): Promise<LogLine> => {
      for (;;) {
        const found = lines.find((line) => line.event === event && where(line));
        if (found) return found;
        if (child.exitCode !== null)
          throw new Error(
            `the service exited (${child.exitCode}) before logging ${event}:\n${raw.slice(-4000)}`,
          );
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    return {
      child,
      lines,
      output: () => raw,
      waitFor,
      httpUrl: async () => (await waitFor("service.started")).http as string,
      exited,
      async stop() {
        if (child.exitCode === null) child.kill("SIGTERM");
        return exited;
      },
    };
  };
  return {
    plane,
    bridge,
    environment,
    dir,
    storePath,
    binDirectory,
    env,
    start,
    run(args, overrides = {}) {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], {
          env: env(overrides),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    },
    async close() {
      for (const child of children) child.kill("SIGKILL");
      await bridge.stop();
      await plane.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The value of one Prometheus sample (`name{labels} value`), 0 when absent. */
export function sample(metrics: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of metrics.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(" ")[0] ?? "";
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`)))
      return Number(line.split(" ").at(-1));
  }
  return 0;
}

/**
 * Makes a file or directory read-only for this process, root included: `chattr +i` (immutable) as root,
 * whose writes a mode would not stop, else a mode without write bits. Returns the undo.
 */
export function makeReadOnly(path: string, kind: "file" | "directory"): () => void {
  if (process.getuid?.() === 0) {
    execFileSync("chattr", ["+i", path]);
    return () => execFileSync("chattr", ["-i", path]);
  }
  chmodSync(path, kind === "file" ? 0o444 : 0o555);
  return () => chmodSync(path, kind === "file" ? 0o644 : 0o755);
}

/** A port free right now on 127.0.0.1 (for a listener whose URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
