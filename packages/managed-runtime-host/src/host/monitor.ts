import { isBusyStore } from "../errors.js";
import { callWithDeadline } from "../transaction/port-call.js";
import { backgroundSleep } from "./background-sleep.js";
import type { RunContext } from "./run-context.js";

/**
 * Renews the fence and heartbeats the sandbox every `heartbeatIntervalMs` until the run stops. Each
 * call must answer within one interval. A `lost` answer, a failure, a timeout or a scheduler that cannot
 * sleep loses the lease (a renewal refused by a busy store is tried again next interval while the fence
 * has at least one more interval before it expires), which aborts every in-flight port call of the run. Once the run stops
 * (caller abort, lease loss, cleanup) no further renewal starts.
 */
export function startMonitor(run: RunContext): void {
  const { heartbeatIntervalMs: interval, leaseTtlMs, fences, sandbox } = run.options;
  const stopped = run.backgroundSignal;
  const loop = async () => {
    for (;;) {
      if (!(await backgroundSleep(run, interval, stopped, "monitor"))) return;
      const fence = run.requireFence();
      const renewed = await callWithDeadline(
        run,
        "fence-renew",
        interval,
        () => fences.renew({ fence, ttlMs: leaseTtlMs }),
        stopped,
      );
      if (stopped.aborted) return abandoned(run, "fence-renew", renewed.ok);
      // A live checkpoint rotated the fence while this renewal was in flight: its answer is stale.
      if (run.fence?.generation !== fence.generation) continue;
      if (
        !renewed.ok &&
        isBusyStore(renewed.error) &&
        run.options.clock.now() + interval < Date.parse(fence.expiresAt)
      ) {
        // Locked by another connection, nothing written: the fence is still this run's until it expires,
        // so the renewal is tried again next interval rather than giving up the run's work.
        run.log.warn("fence.renew_busy", { stage: "fence-renew", message: renewed.error.message });
        continue;
      }
      if (!renewed.ok)
        return void run.loseLease("fence_renew_failed", {
          stage: "fence-renew",
          cause: renewed.error,
        });
      if (renewed.value.type === "lost")
        return void run.loseLease("fence_lost", { stage: "fence-renew" });
      run.setFence(renewed.value.fence);

      const lease = run.lease;
      if (!lease || run.suspended) continue;
      const current = run.requireFence();
      const beat = await callWithDeadline(
        run,
        "sandbox-heartbeat",
        interval,
        () => sandbox.heartbeat({ scope: run.scope, fence: current, lease }),
        stopped,
      );
      if (stopped.aborted) return abandoned(run, "sandbox-heartbeat", beat.ok);
      if (!beat.ok)
        return void run.loseLease("sandbox_heartbeat_failed", {
          stage: "sandbox-heartbeat",
          cause: beat.error,
        });
      if (beat.value.type === "lost")
        return void run.loseLease("sandbox_lost", { stage: "sandbox-heartbeat" });
    }
  };
  run.background.push(loop());
}

/** A monitor call still unanswered when the run stopped is not a failure, but it is reported. */
function abandoned(run: RunContext, stage: string, answered: boolean): void {
  if (!answered) run.log.warn("monitor.unanswered", { stage });
}
