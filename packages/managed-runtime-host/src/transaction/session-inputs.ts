import type {
  ManagedRuntimeError,
  SessionInputLifecycleContext,
} from "@open-managed-agents/runtime-resource-contract";
import { backgroundSleep } from "../host/background-sleep.js";
import type { RunContext } from "../host/run-context.js";
import { callPort, callWithDeadline, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

const syncTails = new WeakMap<RunContext, Promise<unknown>>();
const syncLoops = new WeakMap<RunContext, AbortController>();

/** Puts session resources into the sandbox after attach, before the harness starts. */
export const materializeSessionInputs: RunStep = {
  stage: "session-inputs-materialize",
  applies: (run) => run.options.sessionInputs !== undefined && run.session !== undefined,
  async run(run) {
    const port = run.options.sessionInputs;
    const workspace = run.workspaceBinding;
    if (!port || !workspace) return;
    const stage = "session-inputs-materialize";
    await callPort(run, stage, (signal) =>
      port.materialize({
        ...lifecycleContext(run, signal),
        workspace,
        activeWorkspaceCheckpoint: run.publication?.workspaceCandidate ?? null,
        idempotencyKey: idempotencyKey(run, stage),
      }),
    );
    run.sessionInputsMaterialized = true;
  },
};

/** Writes session-input changes back once the harness has finished. */
export const synchronizeSessionInputsFinal: RunStep = {
  stage: "session-inputs-synchronize-final",
  applies: (run) => run.sessionInputsMaterialized,
  run: (run) => synchronizeSessionInputs(run, "final"),
};

/** One synchronisation, serialised with every other one of the run. */
export function synchronizeSessionInputs(run: RunContext, label: string): Promise<void> {
  const port = run.options.sessionInputs;
  if (!port || !run.sessionInputsMaterialized) return Promise.resolve();
  const stage = `session-inputs-synchronize-${label}`;
  const previous = syncTails.get(run) ?? Promise.resolve();
  const next = previous.then(() =>
    callPort(run, stage, (signal) =>
      port.synchronize({
        ...lifecycleContext(run, signal),
        idempotencyKey: idempotencyKey(run, stage),
      }),
    ),
  );
  syncTails.set(
    run,
    next.catch(() => undefined),
  );
  return next;
}

/**
 * Starts periodic synchronisation while the harness runs, when the materializer owns a writable memory
 * store (supervised lane). A failed sync fails the run; a scheduler that cannot sleep loses the lease.
 */
export function startSessionInputSync(run: RunContext): void {
  if (!run.sessionInputsMaterialized || !ownsWritableMemory(run)) return;
  const stop = new AbortController();
  if (run.backgroundSignal.aborted) stop.abort(run.backgroundSignal.reason);
  else
    run.backgroundSignal.addEventListener("abort", () => stop.abort(run.backgroundSignal.reason), {
      once: true,
    });
  syncLoops.set(run, stop);
  const loop = async () => {
    for (let round = 1; ; round += 1) {
      if (
        !(await backgroundSleep(
          run,
          run.options.sessionInputSyncIntervalMs,
          stop.signal,
          "session-inputs-sync",
        ))
      )
        return;
      try {
        await synchronizeSessionInputs(run, `periodic-${round}`);
      } catch (error) {
        run.fail(error as ManagedRuntimeError);
        return;
      }
    }
  };
  run.background.push(loop());
}

/** Stops the periodic loop; the final synchronisation follows as its own step. */
export function stopSessionInputSync(run: RunContext): void {
  syncLoops.get(run)?.abort(SYNC_STOPPED);
}

const SYNC_STOPPED: Error = new Error("harness run ended");

function ownsWritableMemory(run: RunContext): boolean {
  return (
    memoryOwner(run) === "materializer" &&
    (run.session?.resources ?? []).some(
      (resource) => resource.type === "memory_store" && resource.access !== "read_only",
    )
  );
}

function memoryOwner(run: RunContext): "worker" | "materializer" {
  return run.profile.driver.type === "ama_worker" ? "worker" : "materializer";
}

function lifecycleContext(run: RunContext, signal: AbortSignal): SessionInputLifecycleContext {
  const session = run.session;
  const lease = run.lease;
  if (!session || !lease) throw new Error("session inputs need a session and a sandbox");
  return {
    scope: run.scope,
    fence: run.requireFence(),
    session,
    sandbox: lease,
    resourceOwnership: { memoryStore: memoryOwner(run) },
    ...(run.sessionInputAccess ? { access: run.sessionInputAccess } : {}),
    authorize: () => authorize(run),
    signal,
  };
}

/** True while the run's fence is current; a false or failed answer loses the lease. */
async function authorize(run: RunContext): Promise<boolean> {
  const fence = run.fence;
  if (run.outcome || !fence) return false;
  const stage = "fence-is-current";
  const settled = await callWithDeadline(
    run,
    stage,
    run.options.heartbeatIntervalMs,
    () => run.options.fences.isCurrent(fence),
    run.signal,
  );
  if (settled.ok && settled.value) return true;
  // A live checkpoint may have rotated the fence meanwhile; the newer fence is then the one to check.
  if (run.fence && run.fence.generation !== fence.generation) return authorize(run);
  run.loseLease("fence_not_current", { stage, ...(settled.ok ? {} : { cause: settled.error }) });
  return false;
}
