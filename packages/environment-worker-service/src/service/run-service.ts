import Anthropic from "@anthropic-ai/sdk";
import { VERSION as SDK_VERSION } from "@anthropic-ai/sdk/version";
import { createManagedEnvironmentWorker } from "@open-managed-agents/managed-environment-worker";
import { createManagedRuntimeOrphanReconciler } from "@open-managed-agents/managed-runtime-host";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";
import { createKeepAliveFetch } from "@open-managed-agents/runtime-utils/node";
import type { LoadedConfig } from "../config/load-config.js";
import { defaultProfile } from "../config/schema.js";
import { type ReadinessState, startHealthServer } from "../http/health-server.js";
import type { ServiceLogger } from "../logging/logger.js";
import { type ServiceMetrics, createServiceMetrics } from "../metrics/metrics.js";
import { createOperatorQueries } from "../stores/operator-queries.js";
import { composeDeployment } from "./compose.js";
import { createDependencyHealth } from "./dependency-health.js";
import { reconcilerSalvage, salvageLogFields } from "./reconciler-salvage.js";
import { createSweepLoop } from "./sweep-loop.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A running service; `stop()` is what SIGTERM does. */
export interface RunningService {
  readonly httpUrl: string | null;
  /** Resolves when the service has stopped (claiming ended, items finished or ended, listeners closed). */
  readonly done: Promise<void>;
  /** Stops claiming, lets running items finish for `shutdownGraceMs`, then ends them as the host does. */
  stop(): void;
}

/** How long the SDK client keeps an idle connection to the API for reuse; under common servers' idle timeouts. */
const API_IDLE_CONNECTION_MS = 2_000;

let apiFetch: typeof fetch | undefined;

/**
 * The SDK client of the worker: the environment key is all it holds; its log lines go to the service logger.
 * Its requests go through Node's own HTTP client (runtime-utils' keep-alive fetch), not Node's `fetch`
 * (undici), whose WebAssembly parser costs a long-running process memory from its first connections on.
 * One connection pool per process.
 */
export function createWorkerClient(loaded: LoadedConfig, logger: ServiceLogger): Anthropic {
  apiFetch ??= createKeepAliveFetch({ idleConnectionMs: API_IDLE_CONNECTION_MS });
  return new Anthropic({
    baseURL: loaded.config.apiBaseUrl,
    apiKey: null,
    authToken: null,
    fetch: apiFetch,
    logger: logger.sdk,
    // Never the SDK's debug level: its debug lines carry request and response details (a poll's answer
    // holds the item's work secret), which no log of this service may hold.
    logLevel: loaded.config.logLevel === "debug" ? "info" : "warn",
  });
}

/** Builds and starts the whole deployment: claim loop, reconciler, checkpoint sweep, health and metrics. */
export async function startService(
  loaded: LoadedConfig,
  context: { env: Env; logger: ServiceLogger },
): Promise<RunningService> {
  const { config } = loaded;
  const log = context.logger.host;
  let queries: ReturnType<typeof createOperatorQueries> | null = null;
  const metrics = createServiceMetrics({
    pendingCounts: () => queries?.pendingCounts() ?? Promise.resolve({ orphans: 0, journal: 0 }),
  });
  const composition = await composeDeployment(config, { env: context.env, logger: log, metrics });
  queries = createOperatorQueries(composition.store.client);
  const client = createWorkerClient(loaded, context.logger);
  const health = createDependencyHealth({ client, config, store: composition.store });
  context.logger.tap((_level, event, fields) => {
    if (
      event === "worker.drain_failed" ||
      event === "worker.poller_failed" ||
      event === "worker.fallback_drain_failed"
    ) {
      metrics.apiFailures.inc({ operation: event.slice("worker.".length) });
      health.apiFailed();
    }
    // The SDK's poller retries a failed poll itself and only logs it: counted here, so it is never silent.
    if (
      event === "sdk.log" &&
      typeof fields.message === "string" &&
      fields.message.startsWith("poll failed")
    ) {
      metrics.apiFailures.inc({ operation: "poll" });
      health.apiFailed();
    }
  });
  const worker = createManagedEnvironmentWorker({
    client,
    environmentId: config.environmentId,
    environmentKey: config.environmentKey,
    workspaceId: config.workspaceId,
    host: async (input) => {
      try {
        const host = await composition.hostFactory(input);
        health.driverOk();
        return host;
      } catch (error) {
        health.driverFailed(error);
        throw error;
      }
    },
    profileFor: () => defaultProfile(config),
    concurrency: config.concurrency,
    fallbackPollIntervalMs: config.pollIntervalMs,
    shutdownGraceMs: config.shutdownGraceMs,
    leaseWhilePreparing: config.leaseWhilePreparing,
    apiBaseUrl: config.apiBaseUrl,
    ...(config.workerId ? { workerId: config.workerId } : {}),
    ...(config.webhookKey ? { webhookKey: config.webhookKey } : {}),
    logger: log,
    onRunResult: (report) => {
      metrics.recordItem(report);
      const outcome = report.outcome;
      const detail =
        outcome.type === "ran" && outcome.result.type !== "completed" && "error" in outcome.result
          ? outcome.result.error
          : null;
      log.info("work.done", {
        workId: report.workId,
        sessionId: report.scope?.sessionId ?? null,
        lane: report.lane,
        outcome: outcome.type === "ran" ? outcome.result.type : outcome.type,
        ...(outcome.type === "ran" && outcome.result.type === "completed"
          ? { revision: outcome.result.revision, generation: outcome.result.generation }
          : {}),
        ...(outcome.type === "deferred" ? { reason: outcome.reason } : {}),
        ...(detail ? { code: detail.code, message: detail.message } : {}),
      });
    },
  });
  const stopping = new AbortController();
  const background = new AbortController();
  const reconciler = createManagedRuntimeOrphanReconciler({
    orphans: composition.store.orphans,
    journal: composition.store.journal,
    fences: composition.store.fences,
    sandbox: reconcilerSandbox(composition, config),
    // A sandbox whose ama_worker run lost its process mid-turn is checkpointed and published before the reap.
    salvage: reconcilerSalvage(composition, defaultProfile(config)),
    ownerId: `${config.ownerId}:salvage`,
    onSalvage: (record, outcome) =>
      log[outcome.type === "failed" ? "warn" : "info"](
        "reconciler.salvage",
        salvageLogFields(record, outcome),
      ),
    secrets: loaded.secrets,
  });
  const reconciling = reconcileLoop(reconciler, {
    intervalMs: config.reconcileIntervalMs,
    signal: background.signal,
    log,
    metrics,
  });
  const sweeping =
    composition.sweep && config.sweepIntervalMs > 0
      ? createSweepLoop({
          sweep: composition.sweep,
          queries,
          logger: log,
          metrics,
          intervalMs: config.sweepIntervalMs,
          graceMs: config.sweepGraceMs,
        }).run(background.signal)
      : Promise.resolve();
  const server =
    config.httpPort !== undefined
      ? await startHealthServer({
          host: config.httpHost,
          port: config.httpPort,
          registry: metrics.registry,
          readiness: (): Promise<ReadinessState> => health.state(),
          ...(config.webhookKey
            ? {
                webhook: async (request) => {
                  try {
                    const receipt = await worker.handleWebhook(request);
                    return { status: 200, body: `${JSON.stringify(receipt)}\n` };
                  } catch (error) {
                    // Errors cross HTTP as {code, message}; the message names no header or body value.
                    const typed = ManagedRuntimeError.isInstance(error) ? error : null;
                    const code = typed?.code ?? "internal";
                    return {
                      status: typed?.httpStatus ?? 500,
                      body: `${JSON.stringify({ code, message: `webhook refused: ${code}` })}\n`,
                    };
                  }
                },
              }
            : {}),
        })
      : null;
  log.info("service.started", {
    environmentId: config.environmentId,
    apiBaseUrl: config.apiBaseUrl,
    sdkVersion: SDK_VERSION,
    driver: config.driver,
    store: composition.store.description,
    concurrency: config.concurrency,
    http: server?.url ?? null,
    sweep: composition.sweep !== null && config.sweepIntervalMs > 0,
  });
  const done = (async () => {
    try {
      await worker.run(stopping.signal);
    } finally {
      background.abort();
      await Promise.allSettled([reconciling, sweeping]);
      await server?.close();
      await composition.close();
      log.info("service.stopped", {});
    }
  })();
  return { httpUrl: server?.url ?? null, done, stop: () => stopping.abort() };
}

/** The reconciler reaps through the driver's sandbox port of a scope (a reap needs no fence token). */
function reconcilerSandbox(
  composition: Awaited<ReturnType<typeof composeDeployment>>,
  config: LoadedConfig["config"],
) {
  const portOf = async (scope: Parameters<typeof composition.prepare>[0]) =>
    (await composition.prepare(scope, defaultProfile(config))).resources.sandbox;
  const inspectScope = {
    workspaceId: config.workspaceId,
    environmentId: config.environmentId,
    sessionId: "oma-reconciler",
    workId: "oma-reconciler",
  };
  return {
    reap: async (input: Parameters<Awaited<ReturnType<typeof portOf>>["reap"]>[0]) =>
      (await portOf(input.scope)).reap(input),
    inspect: async (lease: Parameters<Awaited<ReturnType<typeof portOf>>["inspect"]>[0]) =>
      (await portOf(inspectScope)).inspect(lease),
  };
}

/** Runs a reconciler pass every `intervalMs`, counting and logging what each pass did. */
async function reconcileLoop(
  reconciler: ReturnType<typeof createManagedRuntimeOrphanReconciler>,
  options: {
    intervalMs: number;
    signal: AbortSignal;
    log: ServiceLogger["host"];
    metrics: ServiceMetrics;
  },
): Promise<void> {
  while (!options.signal.aborted) {
    try {
      const summary = await reconciler.runOnce({ limit: 50, signal: options.signal });
      const journal = summary.journal;
      const counts: [string, string, number][] = [
        ["orphan", "reaped", summary.reaped],
        ["orphan", "failed", summary.failed],
        ["orphan", "given_up", summary.givenUp],
        ["journal", "reaped", journal?.reaped ?? 0],
        ["journal", "failed", journal?.failed ?? 0],
        ["journal", "given_up", journal?.givenUp ?? 0],
        ["journal", "salvaged", journal?.salvaged ?? 0],
        ["journal", "superseded", journal?.superseded ?? 0],
        ["journal", "salvage_failed", journal?.salvageFailed ?? 0],
      ];
      for (const [kind, result, count] of counts)
        if (count > 0) options.metrics.reconcilerRecords.inc({ kind, result }, count);
      if (counts.some(([, , count]) => count > 0)) {
        options.log.info(
          "reconciler.pass",
          Object.fromEntries(counts.map(([kind, result, count]) => [`${kind}_${result}`, count])),
        );
      }
    } catch (error) {
      if (options.signal.aborted) return;
      options.log.warn("reconciler.failed", {
        code: ManagedRuntimeError.isInstance(error) ? error.code : "error",
        message: error instanceof Error ? error.message : String(error),
      });
    }
    await abortableSleep(options.intervalMs, options.signal).catch(() => undefined);
  }
}
