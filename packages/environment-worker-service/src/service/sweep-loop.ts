import type { HostLogger } from "@open-managed-agents/managed-runtime-host";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";
import type { ServiceMetrics } from "../metrics/metrics.js";
import type { OperatorQueries } from "../stores/operator-queries.js";
import type { CheckpointSweep } from "./compose.js";

/**
 * Sweeps the checkpoint objects of every session that published since the previous pass (the first pass
 * looks back one grace period and one interval), one session at a time, keeping what is published.
 */
export function createSweepLoop(options: {
  readonly sweep: CheckpointSweep;
  readonly queries: OperatorQueries;
  readonly logger: HostLogger;
  readonly metrics: ServiceMetrics;
  readonly intervalMs: number;
  readonly graceMs: number;
}) {
  return {
    async run(signal: AbortSignal): Promise<void> {
      let since = Date.now() - options.graceMs - options.intervalMs;
      while (!signal.aborted) {
        await abortableSleep(options.intervalMs, signal).catch(() => undefined);
        if (signal.aborted) return;
        const started = Date.now();
        for (const sessionId of await options.queries
          .sessionsPublishedSince(since)
          .catch(() => [])) {
          if (signal.aborted) return;
          try {
            const published = await options.queries.publishedHandles(sessionId);
            const result = await options.sweep({ sessionId, published, graceMs: options.graceMs });
            options.metrics.sweptObjects.inc({ result: "kept" }, result.kept);
            options.metrics.sweptObjects.inc({ result: "deleted" }, result.deleted);
            options.logger.info("sweep.session", {
              sessionId,
              kept: result.kept,
              deleted: result.deleted,
            });
          } catch (error) {
            options.logger.warn("sweep.failed", {
              sessionId,
              code: ManagedRuntimeError.isInstance(error) ? error.code : "error",
            });
          }
        }
        since = started - options.graceMs;
      }
    },
  };
}
