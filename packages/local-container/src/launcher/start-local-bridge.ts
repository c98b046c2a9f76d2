import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  ManagedRuntimeError,
  ReadinessFailedError,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";
import { Log, LogLevel, Miniflare } from "miniflare";
import { controlTokenHeaders, createControlToken } from "../server/control-token.js";
import { type LocalContainerServer, createLocalContainerServer } from "../server/server.js";
import {
  makeOwnedTemporaryDirectory,
  removeAbandonedTemporaryDirectories,
} from "./abandoned-directories.js";
import { type StartLocalBridgeOptions, resolveLauncherOptions } from "./launcher-options.js";
import { useNamedWorkerdEnvironment } from "./workerd-environment.js";

/** Compatibility date the bundled Worker runs with (supported by the pinned workerd). */
const COMPATIBILITY_DATE = "2026-04-01";

/** Bytes of workerd's stderr kept to explain a failed start. */
const STDERR_TAIL_BYTES = 8 * 1024;

/** Routes workerd's output: passed through when verbose, otherwise dropped except a tail of stderr. */
function runtimeOutput(verbose: boolean): {
  handle: (stdout: Readable, stderr: Readable) => void;
  tail: () => string;
} {
  let tail = "";
  return {
    handle(stdout, stderr) {
      if (verbose) {
        stdout.pipe(process.stdout);
        stderr.pipe(process.stderr);
        return;
      }
      stdout.resume();
      stderr.on("data", (chunk: Buffer) => {
        tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
    },
    tail: () => tail,
  };
}

/** A running local Sandbox Bridge. */
export interface LocalBridge {
  /** Base URL of the bridge Worker, e.g. `http://127.0.0.1:43117` (routes under `/v1`, health at `/health`). */
  readonly url: string;
  /** The bridge's `SANDBOX_API_KEY`; send it as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  /** The local container server the Worker's containers run on (a new one after {@link LocalBridge.restartContainerServer}). */
  readonly containerServer: LocalContainerServer;
  /**
   * Stops the container server as a crashed container runtime would stop: its containers' processes are
   * killed and their trees removed, and requests the Worker sends it fail until
   * {@link LocalBridge.restartContainerServer}. workerd keeps running.
   */
  stopContainerServer(): Promise<void>;
  /** Starts a fresh container server (no containers) on the port the Worker was given. */
  restartContainerServer(): Promise<void>;
  /**
   * Kills workerd (as a crashed or redeployed Worker would be) and starts it again on the same port and
   * Durable Object state, leaving the container server and its containers running.
   */
  restartWorker(): Promise<void>;
  /** Kills workerd only; requests fail until {@link LocalBridge.restartWorker}. */
  stopWorker(): Promise<void>;
  /**
   * Asks the container server whether it answers (`GET /api/ping`, which starts nothing): null when it does,
   * else a sentence naming it and what failed. Give it to the `cloudflare-bridge` driver as its
   * `checkContainerRuntime` option so that a dead runtime is named as such, not as the sandbox's failure.
   */
  checkContainerRuntime(signal?: AbortSignal): Promise<string | null>;
  /** Stops workerd and the container server (killing every container process) and removes temporary state. */
  stop(): Promise<void>;
}

/** Path of the packaged bridge Worker bundle. */
export function defaultBridgeWorkerPath(): string {
  return fileURLToPath(new URL("./worker/bridge-worker.js", import.meta.url));
}

/**
 * Starts Cloudflare's Sandbox Bridge Worker (`@cloudflare/sandbox/bridge` 0.12.10, with the real `Sandbox`
 * and `WarmPool` Durable Objects) in local workerd through Miniflare, over a local container server.
 * Nothing needs Docker; both listen on loopback ports.
 */
export async function startLocalBridge(
  options: StartLocalBridgeOptions = {},
): Promise<LocalBridge> {
  const resolved = resolveLauncherOptions(options);
  // workerd gets a named environment, not this process's (which may hold keys).
  useNamedWorkerdEnvironment();
  const apiKey = resolved.apiKey ?? randomBytes(32).toString("hex");
  // One control token per launch: the Worker's binding holds it across container server restarts.
  const controlToken = createControlToken();
  const cleanup: string[] = [];
  // What launchers killed before their stop() left in the temporary directory (theirs only: live ones stay).
  await removeAbandonedTemporaryDirectories();
  const rootDir = resolved.rootDir ?? (await makeOwnedTemporaryDirectory("oma-local-containers-"));
  if (resolved.rootDir === undefined) cleanup.push(rootDir);
  const stateDir =
    resolved.stateDir ?? (await makeOwnedTemporaryDirectory("oma-local-bridge-state-"));
  if (resolved.stateDir === undefined) cleanup.push(stateDir);
  // Runs when the process exits without stop() (Miniflare exits on SIGINT/SIGTERM by itself).
  const removeTemporarySync = (): void => {
    for (const directory of cleanup) rmSync(directory, { recursive: true, force: true });
  };
  process.once("exit", removeTemporarySync);
  const removeTemporary = async (): Promise<void> => {
    process.off("exit", removeTemporarySync);
    await Promise.all(cleanup.map((directory) => rm(directory, { recursive: true, force: true })));
  };

  const output = runtimeOutput(resolved.verbose);
  let containerServer: LocalContainerServer | undefined;
  let miniflare: Miniflare | undefined;
  try {
    const startServer = (port?: number): Promise<LocalContainerServer> =>
      createLocalContainerServer({
        rootDir,
        controlToken,
        limits: resolved.limits,
        confinement: resolved.confinement,
        network: resolved.network,
        requireBun: resolved.requireBun,
        ...(port === undefined ? {} : { port }),
        ...(resolved.egressAllowList === undefined
          ? {}
          : { egressAllowList: resolved.egressAllowList }),
      });
    containerServer = await startServer();
    const scriptPath = resolved.workerScriptPath ?? defaultBridgeWorkerPath();
    let server = containerServer;
    let serverStopped = false;
    const startWorker = (port: number): Miniflare =>
      new Miniflare({
        host: resolved.host,
        port,
        modules: true,
        scriptPath,
        // Module names are relative to this root; workerd refuses names that climb out of it with "..".
        modulesRoot: dirname(scriptPath),
        compatibilityDate: COMPATIBILITY_DATE,
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: {
          Sandbox: { className: "Sandbox", useSQLite: true },
          WarmPool: { className: "WarmPool", useSQLite: true },
        },
        bindings: {
          SANDBOX_API_KEY: apiKey,
          SANDBOX_TRANSPORT: resolved.transport,
          WARM_POOL_TARGET: String(resolved.warmPoolTarget),
          // The pool's ceiling is the server's limit, never one inferred under a burst (see warm-pool-limit.ts).
          WARM_POOL_MAX_INSTANCES: String(server.limits.maxContainers),
          OMA_LOCAL_CONTAINER_URL: server.url,
          OMA_LOCAL_CONTAINER_TOKEN: controlToken,
        },
        durableObjectsPersist: join(stateDir, "durable-objects"),
        ...(resolved.inspectorPort === undefined ? {} : { inspectorPort: resolved.inspectorPort }),
        cf: false,
        log: new Log(resolved.verbose ? LogLevel.INFO : LogLevel.WARN),
        handleRuntimeStdio: output.handle,
      });
    miniflare = startWorker(resolved.port);
    const url = (await miniflare.ready).origin;
    if (resolved.warmPoolTarget > 0) await primeWarmPool(url, apiKey);
    let worker: Miniflare | null = miniflare;
    let stopping: Promise<void> | undefined;
    const stopWorker = async (): Promise<void> => {
      const running = worker;
      worker = null;
      await running?.dispose();
    };
    return {
      url,
      apiKey,
      get containerServer() {
        return server;
      },
      async stopContainerServer() {
        serverStopped = true;
        await server.close();
      },
      async restartContainerServer() {
        if (!serverStopped) await server.close();
        server = await startServer(server.port);
        serverStopped = false;
      },
      stopWorker,
      checkContainerRuntime: (signal) => checkContainerServer(server, signal),
      async restartWorker() {
        await stopWorker();
        const next = startWorker(Number(new URL(url).port));
        await next.ready;
        worker = next;
      },
      stop() {
        stopping ??= (async () => {
          await stopWorker();
          await server.close();
          await removeTemporary();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await miniflare?.dispose().catch(() => undefined);
    await containerServer?.close().catch(() => undefined);
    await removeTemporary();
    if (ManagedRuntimeError.isInstance(error)) throw error;
    const detail = redactSecrets(output.tail().trim(), [apiKey, controlToken]);
    throw new ReadinessFailedError({
      message: `the local bridge did not start: ${error instanceof Error ? error.message : String(error)}${detail === "" ? "" : `\nworkerd said:\n${detail}`}`,
      cause: error,
    });
  }
}

/** How long the container server has to answer a check before it counts as down. */
const CONTAINER_CHECK_TIMEOUT_MS = 5_000;

/** Null when `server` answers its ping, else why it is taken for down (its URL and the failure). */
async function checkContainerServer(
  server: LocalContainerServer,
  signal?: AbortSignal,
): Promise<string | null> {
  const timeout = AbortSignal.timeout(CONTAINER_CHECK_TIMEOUT_MS);
  const down = (why: string) => `the local container runtime at ${server.url} ${why}`;
  try {
    const response = await fetch(`${server.url}/api/ping`, {
      headers: controlTokenHeaders(server.controlToken),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    await response.body?.cancel().catch(() => undefined);
    return response.ok ? null : down(`answers its ping with HTTP ${response.status}`);
  } catch (error) {
    if (signal?.aborted) throw error;
    if (timeout.aborted)
      return down(`did not answer within ${CONTAINER_CHECK_TIMEOUT_MS / 1000} s`);
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    return down(`is not answering (${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

/** Pushes the pool configuration to the WarmPool object, as the bridge's cron trigger would. */
async function primeWarmPool(url: string, apiKey: string): Promise<void> {
  const response = await fetch(`${url}/v1/pool/prime`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  await response.body?.cancel();
  if (!response.ok)
    throw new ReadinessFailedError({
      message: `priming the warm pool failed with HTTP ${response.status}`,
      context: { status: response.status },
    });
}
