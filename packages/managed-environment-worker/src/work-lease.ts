import * as Sdk from "@anthropic-ai/sdk/core/error";
import { LeaseLostError } from "@open-managed-agents/runtime-resource-contract";
import type { HostLogger } from "@open-managed-agents/managed-runtime-host";
import type { ManagedAgentsClient } from "./sdk-client.js";

/** The first heartbeat's precondition, as the Work API spells it. */
export const NO_HEARTBEAT = "NO_HEARTBEAT";

/** Options of {@link startWorkLease}. */
export interface WorkLeaseOptions {
  /** Client carrying the item's credential (sessions token, else environment key). */
  readonly client: ManagedAgentsClient;
  readonly workId: string;
  readonly environmentId: string;
  readonly intervalMs: number;
  readonly ttlSeconds: number;
  readonly logger: HostLogger;
}

/** A running Work-lease heartbeat. `signal` aborts, with a `lease_lost` reason, once the lease is gone. */
export interface WorkLease {
  readonly signal: AbortSignal;
  /** True once the lease was lost (412, stop requested, or no heartbeat answered within the TTL). */
  lost(): boolean;
  /** Ends the heartbeat; resolves after any heartbeat in flight has settled. */
  close(): Promise<void>;
  /**
   * Renews the lease once more, ends the heartbeat and returns the server's `last_heartbeat`: the value the
   * next holder echoes as its first `expected_last_heartbeat`, so the lease passes on without a gap and
   * without two holders. Rejects with the loss when the lease is gone.
   */
  handOver(): Promise<string>;
  /**
   * Ends the heartbeat with a last renewal asking for the shortest lease (1 s), so the platform issues the
   * item again soon instead of a full TTL later: for an item this worker leaves unfinished and unstopped.
   */
  relinquish(): Promise<void>;
}

/**
 * Heartbeats a work item the way the Work API requires: `expected_last_heartbeat` is `NO_HEARTBEAT`
 * first, then the server's previous `last_heartbeat` echoed exactly. A 412 means another worker may
 * hold the lease; `stopping`/`stopped` or `lease_extended: false` means the platform wants it back.
 * The first heartbeat is awaited, so a run never starts on a lease this worker does not hold.
 */
export async function startWorkLease(options: WorkLeaseOptions): Promise<WorkLease> {
  const controller = new AbortController();
  let last = NO_HEARTBEAT;
  let lastOkAt = Date.now();
  let inFlight: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const lose = (trigger: string, cause?: unknown) => {
    if (controller.signal.aborted) return;
    options.logger.warn("work.lease_lost", { workId: options.workId, trigger });
    controller.abort(
      new LeaseLostError({
        message: `work lease lost: ${trigger}`,
        context: { trigger, workId: options.workId },
        cause,
      }),
    );
  };
  const beat = async (ttlSeconds = options.ttlSeconds) => {
    try {
      const response = await options.client.beta.environments.work.heartbeat(
        options.workId,
        {
          environment_id: options.environmentId,
          expected_last_heartbeat: last,
          desired_ttl_seconds: ttlSeconds,
        },
        { signal: controller.signal, maxRetries: 0 },
      );
      last = response.last_heartbeat;
      lastOkAt = Date.now();
      if (response.state === "stopping" || response.state === "stopped")
        lose(`work_${response.state}`);
      else if (!response.lease_extended) lose("lease_not_extended");
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof Sdk.APIError && error.status === 412)
        return lose("heartbeat_precondition_failed", error);
      if (error instanceof Sdk.APIError && (error.status === 404 || error.status === 409))
        return lose(`heartbeat_${error.status}`, error);
      options.logger.warn("work.heartbeat_failed", {
        workId: options.workId,
        status: error instanceof Sdk.APIError ? (error.status ?? null) : null,
      });
      if (Date.now() - lastOkAt > options.ttlSeconds * 1000) lose("heartbeat_ttl_elapsed", error);
    }
  };
  const stop = async () => {
    closed = true;
    if (timer) clearTimeout(timer);
    await inFlight;
  };
  const schedule = () => {
    if (closed || controller.signal.aborted) return;
    timer = setTimeout(() => {
      inFlight = beat().finally(schedule);
    }, options.intervalMs);
  };
  await beat();
  schedule();
  return {
    signal: controller.signal,
    lost: () => controller.signal.aborted,
    close: stop,
    async handOver() {
      await stop();
      if (!controller.signal.aborted) await beat();
      if (controller.signal.aborted) throw controller.signal.reason;
      // A failed renewal that did not lose the lease still leaves a current value to pass on.
      return last;
    },
    async relinquish() {
      await stop();
      if (!controller.signal.aborted) await beat(1);
    },
  };
}
