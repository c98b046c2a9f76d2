import * as Sdk from "@anthropic-ai/sdk/core/error";
import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import { createRedactingLogger, silentLogger } from "@open-managed-agents/managed-runtime-host";
import {
  InvalidRequestError,
  UnauthorizedError,
} from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";
import { type ItemContext, handleWorkItem } from "./handle-item.js";
import {
  type ManagedEnvironmentWorkerOptions,
  type WorkItemReport,
  resolveWorkerOptions,
} from "./options.js";
import { routeSdkLogs } from "./sdk-logger.js";
import { createSessionGate } from "./session-gate.js";
import { createSlots } from "./slots.js";
import {
  type WebhookReceipt,
  type WebhookRequest,
  createRecentIds,
  verifyWebhook,
} from "./webhook.js";

/** What one {@link ManagedEnvironmentWorker.drain} did. */
export interface DrainSummary {
  /** Items claimed by the pass (and any pass coalesced into it). */
  readonly claimed: number;
}

/** A self-hosted environment worker: claims Work API items and runs each through the fenced host. */
export interface ManagedEnvironmentWorker {
  /**
   * Claims with the SDK's WorkPoller (long poll, `autoStop: false`) plus a periodic fallback drain,
   * until `signal` aborts. Then stops claiming, lets running items finish for `shutdownGraceMs`, aborts
   * the rest (their runs end `lease_lost`, nothing published) and resolves.
   */
  run(signal: AbortSignal): Promise<void>;
  /**
   * One non-blocking pass: claims what is queued now (up to the free concurrency) and resolves when
   * those items are done with. Calls made while a pass runs share it and add one more pass after it.
   */
  drain(signal?: AbortSignal): Promise<DrainSummary>;
  /**
   * Verifies a webhook (`unauthorized` when the signature is bad or stale) and schedules one drain,
   * handed to `waitUntil` when given. A redelivery of the same `webhook-id` schedules nothing.
   */
  handleWebhook(request: WebhookRequest): Promise<WebhookReceipt>;
  /**
   * Runs one item the caller already claimed (polled and acked) elsewhere, exactly as a drain runs the
   * items it claims, and resolves with its report (also given to `onRunResult`). Never rejects. For
   * hosts that claim in one place and run in another, such as a Worker that hands each claimed item to
   * its own Durable Object.
   */
  handleClaimed(work: BetaSelfHostedWork): Promise<WorkItemReport>;
}

/** Creates a {@link ManagedEnvironmentWorker}. Options are validated here (`invalid_config` naming the field). */
export function createManagedEnvironmentWorker(
  options: ManagedEnvironmentWorkerOptions,
): ManagedEnvironmentWorker {
  const parsed = resolveWorkerOptions(options);
  const logger = createRedactingLogger(parsed.logger ?? silentLogger, () => [
    parsed.environmentKey,
  ]);
  const resolved = {
    ...parsed,
    client: routeSdkLogs(parsed.client, parsed.logger ? logger : undefined),
  };
  const stopping = new AbortController();
  const abort = new AbortController();
  const context: ItemContext = {
    options: resolved,
    logger,
    gate: createSessionGate(),
    abort: abort.signal,
    stopping: stopping.signal,
  };
  const slots = createSlots(resolved.concurrency);
  const running = new Set<Promise<void>>();
  const recentWebhooks = createRecentIds(1024);
  let started = false;
  let currentDrain: Promise<DrainSummary> | null = null;
  let drainAgain = false;

  const deliver = async (report: WorkItemReport) => {
    try {
      await resolved.onRunResult?.(report);
    } catch {
      logger.warn("worker.on_run_result_failed", { workId: report.workId });
    }
  };

  /** Runs a claimed item in the slot taken for it before the claim. */
  const launch = (work: BetaSelfHostedWork, release: () => void): Promise<void> => {
    logger.info("work.claimed", { workId: work.id, type: work.data.type });
    const item = handleWorkItem(context, work)
      .then(async (report) => {
        await deliver(report);
        // A worker whose driver had no sandbox (or whose store is down) keeps the slot a while: the queue goes to
        // workers that can run it.
        const { outcome } = report;
        if (
          outcome.type === "deferred" &&
          (outcome.reason === "insufficient_capacity" || outcome.reason === "store_unavailable")
        )
          await sleep(resolved.capacityBackoffMs, stopping.signal);
      })
      .finally(() => {
        release();
        running.delete(item);
      });
    running.add(item);
    return item;
  };

  const poller = (signal: AbortSignal, drain: boolean) =>
    resolved.client.beta.environments.work.poller({
      environmentId: resolved.environmentId,
      environmentKey: resolved.environmentKey,
      autoStop: false,
      signal,
      ...(resolved.workerId ? { workerId: resolved.workerId } : {}),
      ...(resolved.reclaimOlderThanMs ? { reclaimOlderThanMs: resolved.reclaimOlderThanMs } : {}),
      ...(drain ? { drain: true, blockMs: null } : {}),
    });

  /**
   * Claims the next item in a slot taken before the claim, so the long poll and a drain that claim at the same
   * time never run more than `concurrency` items: `full` when no slot was free, `none` when no item came (the
   * slot goes back).
   */
  const claimInSlot = async (
    claims: AsyncIterator<BetaSelfHostedWork>,
    into?: Promise<void>[],
  ): Promise<"claimed" | "none" | "full"> => {
    const release = slots.tryTake();
    if (!release) return "full";
    let next: IteratorResult<BetaSelfHostedWork>;
    try {
      next = await claims.next();
    } catch (error) {
      release();
      throw error;
    }
    if (next.done) {
      release();
      return "none";
    }
    const item = launch(next.value, release);
    into?.push(item);
    return "claimed";
  };

  const drainPass = async (signal: AbortSignal, into: Promise<void>[]): Promise<number> => {
    if (!slots.free()) return 0;
    let claimed = 0;
    const pass = new AbortController();
    const stop = () => pass.abort();
    signal.addEventListener("abort", stop, { once: true });
    const claims = poller(AbortSignal.any([pass.signal, stopping.signal]), true)[
      Symbol.asyncIterator
    ]();
    try {
      while ((await claimInSlot(claims, into)) === "claimed") claimed += 1;
    } catch (error) {
      // A refused environment key never recovers: the caller hears it; anything else waits for the next pass.
      if (error instanceof Sdk.APIError && (error.status === 401 || error.status === 403)) {
        throw new UnauthorizedError({
          message: `the Work API refused the environment key (${error.status})`,
          context: { status: error.status },
          cause: error,
        });
      }
      logger.warn("worker.drain_failed", {
        message: error instanceof Error ? error.message : String(error),
      });
    } finally {
      signal.removeEventListener("abort", stop);
      await claims.return?.().catch(() => undefined);
    }
    logger.info("worker.drain_pass", { claimed });
    return claimed;
  };

  const drain = (signal: AbortSignal = new AbortController().signal): Promise<DrainSummary> => {
    if (currentDrain) {
      drainAgain = true;
      return currentDrain;
    }
    currentDrain = (async () => {
      const launched: Promise<void>[] = [];
      let claimed = 0;
      do {
        drainAgain = false;
        claimed += await drainPass(signal, launched);
      } while (drainAgain && !signal.aborted && !stopping.signal.aborted);
      await Promise.allSettled(launched);
      return { claimed };
    })().finally(() => {
      currentDrain = null;
    });
    return currentDrain;
  };

  const longPoll = async () => {
    while (!stopping.signal.aborted) {
      await slots.whenFree(stopping.signal);
      if (stopping.signal.aborted) return;
      const claims = poller(stopping.signal, false)[Symbol.asyncIterator]();
      try {
        while (!stopping.signal.aborted && (await claimInSlot(claims)) !== "none")
          await slots.whenFree(stopping.signal);
      } catch (error) {
        if (stopping.signal.aborted) return;
        // The poller backs off transient failures itself; what reaches here is fatal for this poller
        // (a 4xx such as a revoked key). The fallback drain keeps trying at its own period.
        logger.error("worker.poller_failed", {
          message: error instanceof Error ? error.message : String(error),
        });
        await sleep(resolved.fallbackPollIntervalMs, stopping.signal);
      }
    }
  };

  const shutdown = async () => {
    stopping.abort();
    const grace = new Promise<void>((resolve) =>
      setTimeout(resolve, resolved.shutdownGraceMs).unref?.(),
    );
    const settled = Promise.allSettled([...running]).then(() => undefined);
    await Promise.race([settled, grace]);
    if (running.size > 0) {
      logger.warn("worker.shutdown_aborting", { running: running.size });
      abort.abort();
      await Promise.allSettled([...running]);
    }
    logger.info("worker.stopped", {});
  };

  return {
    async run(signal) {
      if (started)
        throw new InvalidRequestError({ message: "the environment worker is already running" });
      if (stopping.signal.aborted)
        throw new InvalidRequestError({ message: "the environment worker was shut down" });
      started = true;
      const onAbort = () => stopping.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) stopping.abort();
      logger.info("worker.started", {
        environmentId: resolved.environmentId,
        concurrency: resolved.concurrency,
      });
      const fallback = setInterval(() => {
        if (!slots.free()) return;
        drain(stopping.signal).catch((error: unknown) => {
          logger.error("worker.fallback_drain_failed", {
            code: error instanceof Error && "code" in error ? String(error.code) : "unknown",
          });
        });
      }, resolved.fallbackPollIntervalMs);
      try {
        await longPoll();
      } finally {
        clearInterval(fallback);
        signal.removeEventListener("abort", onAbort);
        await shutdown();
      }
    },
    drain,
    async handleWebhook(request) {
      const { id, eventType } = verifyWebhook(resolved.client, request, resolved.webhookKey);
      if (recentWebhooks.seen(id)) {
        logger.info("webhook.duplicate", { webhookId: id, eventType });
        return { eventType, duplicate: true };
      }
      logger.info("webhook.accepted", { webhookId: id, eventType });
      const scheduled = drain().catch((error: unknown) => {
        logger.error("webhook.drain_failed", {
          webhookId: id,
          code: error instanceof Error && "code" in error ? String(error.code) : "unknown",
        });
      });
      request.waitUntil?.(scheduled);
      return { eventType, duplicate: false };
    },
    async handleClaimed(work) {
      const report = await handleWorkItem(context, work);
      await deliver(report);
      return report;
    },
  };
}

// Stopping ends the wait early; the loop then sees the signal and returns.
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return abortableSleep(ms, signal).catch(() => undefined);
}
