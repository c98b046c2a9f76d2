import * as Sdk from "@anthropic-ai/sdk/core/error";
import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import {
  type HostLogger,
  type ManagedRuntimeHost,
  type ManagedRuntimeRunInput,
  type ManagedRuntimeRunResult,
  createRedactingLogger,
} from "@open-managed-agents/managed-runtime-host";
import {
  InternalError,
  InvalidRequestError,
  LeaseLostError,
  ManagedRuntimeError,
  type RuntimeResourceScope,
  parseManagedRuntimeProfile,
} from "@open-managed-agents/runtime-resource-contract";
import { projectWorkEnv, withHarnessEnv } from "./harness-env.js";
import type { ResolvedWorkerOptions, WorkItemOutcome, WorkItemReport } from "./options.js";
import { checkSessionBelongs, createSessionInputAccess, toSessionSnapshot } from "./session.js";
import { type SessionGate, conflictDelayMs } from "./session-gate.js";
import { decodeWorkSecret } from "./work-secret.js";
import { startWorkLease } from "./work-lease.js";
import type { ManagedAgentsClient } from "./sdk-client.js";

/** What every item shares. */
export interface ItemContext {
  readonly options: ResolvedWorkerOptions;
  readonly logger: HostLogger;
  readonly gate: SessionGate;
  /** Aborted at the shutdown deadline: running host calls end as `lease_lost`. */
  readonly abort: AbortSignal;
  /** Aborted when shutdown starts: conflict waits end and the item is deferred. */
  readonly stopping: AbortSignal;
}

/**
 * Runs one claimed item end to end and reports how it ended. Never throws: every failure becomes a
 * `rejected` outcome, so one bad item never stops the loop.
 */
export async function handleWorkItem(
  context: ItemContext,
  work: BetaSelfHostedWork,
): Promise<WorkItemReport> {
  const { options } = context;
  let sessionsToken: string | null = null;
  const logger = createRedactingLogger(context.logger, () =>
    [options.environmentKey, work.secret ?? "", sessionsToken ?? ""].filter(Boolean),
  );
  const environmentClient = itemClient(options.client, options.environmentKey);
  if (work.data.type !== "session") {
    await stopWork(environmentClient, work, logger);
    logger.info("work.skipped", { workId: work.id, reason: "healthcheck" });
    return {
      workId: work.id,
      scope: null,
      lane: null,
      outcome: { type: "skipped", reason: "healthcheck" },
    };
  }
  const scope: RuntimeResourceScope = {
    workspaceId: options.workspaceId,
    environmentId: options.environmentId,
    sessionId: work.data.id,
    workId: work.id,
  };
  let client = environmentClient;
  let lane: WorkItemReport["lane"] = null;
  try {
    if (work.environment_id !== options.environmentId) {
      throw new InvalidRequestError({
        message: "the work item belongs to another environment",
        context: { field: "environment_id" },
      });
    }
    const decoded = decodeWorkSecret(work.secret);
    sessionsToken = decoded.sessionsToken;
    if (sessionsToken === null)
      logger.warn("work.secret_without_sessions_token", {
        workId: work.id,
        hasSecret: work.secret !== null,
      });
    client = sessionsToken === null ? environmentClient : itemClient(options.client, sessionsToken);
    const session = await client.beta.sessions.retrieve(
      scope.sessionId,
      {},
      { signal: context.abort },
    );
    checkSessionBelongs(session, {
      sessionId: scope.sessionId,
      environmentId: options.environmentId,
    });
    if (session.status === "terminated") {
      await stopWork(client, work, logger);
      logger.info("work.skipped", {
        workId: work.id,
        sessionId: scope.sessionId,
        reason: "session_terminated",
      });
      return {
        workId: work.id,
        scope,
        lane,
        outcome: { type: "skipped", reason: "session_terminated" },
      };
    }
    // A profile is caller input: refused here, typed, before anything reads it.
    const base = parseManagedRuntimeProfile(await options.profileFor(work, session));
    lane = base.driver?.type ?? null;
    const env = (own: Readonly<Record<string, string>> | undefined) =>
      projectWorkEnv(own, {
        workId: work.id,
        environmentId: options.environmentId,
        sessionId: scope.sessionId,
        secret: work.secret,
        decoded,
        apiBaseUrl: decoded.apiBaseUrl ?? options.apiBaseUrl ?? options.client.baseURL,
        environmentKey: options.environmentKey,
        hostedInference: options.hostedInference ?? null,
      });
    const profile = withHarnessEnv(base, env);
    const host =
      typeof options.host === "function"
        ? await options.host({ scope, profile, signal: context.abort })
        : options.host;
    const setup = options.environmentFor ? await options.environmentFor(work, session) : null;
    const run = {
      host,
      scope,
      profile,
      session: toSessionSnapshot(session),
      sessionInputAccess: createSessionInputAccess(client),
      ...(setup?.packages ? { environmentPackages: setup.packages } : {}),
      ...(setup?.sandboxImageAlias ? { sandboxImageAlias: setup.sandboxImageAlias } : {}),
    };
    const outcome =
      lane === "openma_supervised"
        ? await runSupervised(context, logger, run, client, work)
        : options.leaseWhilePreparing
          ? await runLeasedUntilHarness(context, logger, run, client, work)
          : await runWithRetries(context, logger, run, context.abort, work);
    return { workId: work.id, scope, lane, outcome };
  } catch (error) {
    const typed = ManagedRuntimeError.isInstance(error) ? error : describeUnexpected(error);
    logger.error("work.rejected", {
      workId: work.id,
      sessionId: scope.sessionId,
      code: typed.code,
      message: typed.message,
    });
    await stopWork(client, work, logger);
    return { workId: work.id, scope, lane, outcome: { type: "rejected", error: typed } };
  }
}

type RunInput = ManagedRuntimeRunInput & { readonly host: ManagedRuntimeHost };

/** Runs the host, retrying `conflict` (the previous turn still holds the session fence) with backoff. */
async function runWithRetries(
  context: ItemContext,
  logger: HostLogger,
  input: RunInput,
  signal: AbortSignal,
  work: BetaSelfHostedWork,
): Promise<WorkItemOutcome> {
  const policy = context.options.conflictRetry;
  for (let attempt = 1; ; attempt += 1) {
    const leave = context.gate.enter(input.scope.sessionId);
    let result: ManagedRuntimeRunResult;
    try {
      const { host, ...rest } = input;
      result = await host.run({ ...rest, signal });
    } finally {
      leave();
    }
    logger.info("work.run_result", {
      workId: work.id,
      sessionId: input.scope.sessionId,
      result: result.type,
      attempt,
    });
    const deferral = deferralOf(result);
    if (deferral) {
      // Nothing ran and nothing was published: the item is not this worker's to fail. Unstopped, it returns to
      // the queue when its lease lapses, for a worker (this one later, or another) that can run it.
      logger.warn("work.deferred", { workId: work.id, reason: deferral, attempts: attempt });
      return { type: "deferred", reason: deferral, attempts: attempt };
    }
    if (result.type !== "conflict") return { type: "ran", result, attempts: attempt };
    if (attempt >= policy.attempts) {
      logger.warn("work.deferred", {
        workId: work.id,
        reason: "conflict_retries_exhausted",
        attempts: attempt,
      });
      return { type: "deferred", reason: "conflict_retries_exhausted", attempts: attempt };
    }
    const wake = AbortSignal.any([context.stopping, signal]);
    await context.gate.waitForRelease(
      input.scope.sessionId,
      conflictDelayMs(attempt, result.expiresAt, policy),
      wake,
    );
    if (wake.aborted) {
      const reason = context.stopping.aborted ? "shutdown" : "lease_lost";
      logger.warn("work.deferred", { workId: work.id, reason, attempts: attempt });
      return reason === "shutdown"
        ? { type: "deferred", reason, attempts: attempt }
        : { type: "ran", result: leaseLostResult(signal), attempts: attempt };
    }
  }
}

/** This worker's heartbeats of the item's Work lease, at the configured interval and TTL. */
function startItemLease(
  context: ItemContext,
  logger: HostLogger,
  client: ManagedAgentsClient,
  work: BetaSelfHostedWork,
) {
  return startWorkLease({
    client,
    workId: work.id,
    environmentId: work.environment_id,
    intervalMs: context.options.heartbeatIntervalMs,
    ttlSeconds: context.options.heartbeatTtlSeconds,
    logger,
  });
}

/**
 * Supervised lane: this worker holds the Work lease for the whole item (conflict retries included, so
 * `expected_last_heartbeat` stays this worker's own) and stops the item afterwards unless the lease was lost.
 */
async function runSupervised(
  context: ItemContext,
  logger: HostLogger,
  input: RunInput,
  client: ManagedAgentsClient,
  work: BetaSelfHostedWork,
): Promise<WorkItemOutcome> {
  const lease = await startItemLease(context, logger, client, work);
  try {
    if (lease.lost()) return { type: "ran", result: leaseLostResult(lease.signal), attempts: 0 };
    const outcome = await runWithRetries(
      context,
      logger,
      input,
      AbortSignal.any([lease.signal, context.abort]),
      work,
    );
    if (outcome.type === "ran" && !lease.lost()) await stopWork(client, work, logger);
    return outcome;
  } finally {
    await lease.close();
  }
}

/** Names the handed-over `last_heartbeat` in the harness's environment; `oma-ama-worker` reads it. */
export const LEASE_HANDOVER_ENV = "OMA_WORK_LAST_HEARTBEAT";

/**
 * `ama_worker` lane: the in-sandbox worker owns the item's heartbeats while the harness runs, but nothing
 * renews the lease while the host prepares the sandbox. This worker heartbeats it until the host is about to
 * start the harness, then renews it once more, stops, and passes the server's `last_heartbeat` on: the
 * in-sandbox worker's first heartbeat continues from it. One holder at a time: the harness starts only after
 * this worker's last heartbeat has settled. A lease lost before that ends the run as `lease_lost`; a run that
 * never reached its harness (deferred, failed) relinquishes the lease.
 */
async function runLeasedUntilHarness(
  context: ItemContext,
  logger: HostLogger,
  input: RunInput,
  client: ManagedAgentsClient,
  work: BetaSelfHostedWork,
): Promise<WorkItemOutcome> {
  const lease = await startItemLease(context, logger, client, work);
  let handedOver = false;
  try {
    if (lease.lost()) return { type: "ran", result: leaseLostResult(lease.signal), attempts: 0 };
    const beforeHarness = async () => {
      const lastHeartbeat = await lease.handOver();
      handedOver = true;
      logger.info("work.lease_handed_over", { workId: work.id });
      return { [LEASE_HANDOVER_ENV]: lastHeartbeat };
    };
    return await runWithRetries(
      context,
      logger,
      { ...input, beforeHarness },
      AbortSignal.any([lease.signal, context.abort]),
      work,
    );
  } finally {
    // No harness took the lease over: the item goes back to the platform as soon as a short lease lapses, as
    // the ack's lease would have let it.
    if (handedOver) await lease.close();
    else await lease.relinquish();
  }
}

const STORE_DOWN_CODES = new Set(["unavailable", "storage_unwritable", "timeout"]);

/**
 * Why a failed run is the platform's to issue again rather than this worker's to fail, if it is: the driver had
 * no sandbox to give (`insufficient_capacity` at the sandbox's acquire), or the fence store could not take the
 * fence (down, read-only, too slow); in both, before anything ran.
 */
function deferralOf(
  result: ManagedRuntimeRunResult,
): "insufficient_capacity" | "store_unavailable" | null {
  if (result.type !== "failed") return null;
  const { code, context } = result.error;
  if (code === "insufficient_capacity" && context?.stage === "sandbox-acquire")
    return "insufficient_capacity";
  if (STORE_DOWN_CODES.has(code) && context?.stage === "fence-acquire") return "store_unavailable";
  return null;
}

function leaseLostResult(signal: AbortSignal): ManagedRuntimeRunResult {
  const reason: unknown = signal.reason;
  const error = ManagedRuntimeError.hasCode(reason, "lease_lost")
    ? (reason as LeaseLostError)
    : new LeaseLostError({
        message: "work lease lost before the run",
        context: { trigger: "aborted" },
      });
  return { type: "lease_lost", error, cleanupErrors: [] };
}

/** A copy of `client` that sends only `token` as its Bearer credential. */
function itemClient(client: ManagedAgentsClient, token: string): ManagedAgentsClient {
  return client.withOptions({ apiKey: null, authToken: token });
}

/** Force-stops an item; a 409 (already stopped) is expected after the in-sandbox worker's own stop. */
async function stopWork(
  client: ManagedAgentsClient,
  work: BetaSelfHostedWork,
  logger: HostLogger,
): Promise<void> {
  try {
    await client.beta.environments.work.stop(work.id, {
      environment_id: work.environment_id,
      force: true,
    });
    logger.info("work.stopped", { workId: work.id });
  } catch (error) {
    if (error instanceof Sdk.APIError && error.status === 409) return;
    logger.warn("work.stop_failed", {
      workId: work.id,
      status: error instanceof Sdk.APIError ? (error.status ?? null) : null,
    });
  }
}

function describeUnexpected(error: unknown): ManagedRuntimeError {
  if (error instanceof Sdk.APIError) {
    return new ManagedRuntimeError(
      error.status === 401 || error.status === 403
        ? "unauthorized"
        : error.status === 404
          ? "not_found"
          : "upstream_protocol",
      {
        message: `Managed Agents API answered ${error.status ?? "without a status"}`,
        context: { status: error.status ?? null },
        cause: error,
      },
    );
  }
  return new InternalError({
    message: "unexpected failure while preparing the work item",
    cause: error,
  });
}
