import {
  type ManagedRuntimeProfile,
  OUTPUTS_MOUNT_PATH,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import { environmentSetupOf } from "./install-environment-packages.js";
import { createLiveCheckpoints } from "./live-checkpoint.js";
import { callPort } from "./port-call.js";
import { markSalvageable } from "./sandbox-journal.js";
import { startSessionInputSync, stopSessionInputSync } from "./session-inputs.js";
import type { RunStep } from "./step.js";

const stage = "harness-run";

/**
 * Runs the harness with the live-checkpoint callback; `aborted` ends the run as `lease_lost`. The caller's
 * `beforeHarness` runs first (its variables join the harness's environment), then an `ama_worker` run's
 * journal record is marked salvageable (see `markSalvageable`).
 */
export const runHarness: RunStep = {
  stage,
  applies: () => true,
  async run(run) {
    const lease = run.lease;
    if (!lease) return;
    const fence = run.requireFence();
    const added = run.beforeHarness ? await run.beforeHarness(run.signal) : undefined;
    run.signal.throwIfAborted();
    const driver = withVariables(run.profile.driver, added);
    const live = createLiveCheckpoints(run);
    startSessionInputSync(run);
    const environmentSetup = environmentSetupOf(run);
    await markSalvageable(run, lease, stage);
    let result;
    try {
      result = await callPort(run, stage, (signal) =>
        run.options.harnessDriver.run({
          scope: run.scope,
          fence,
          sandbox: lease,
          workspacePath: WORKSPACE_MOUNT_PATH,
          outputPath: run.outputBinding ? OUTPUTS_MOUNT_PATH : null,
          driver,
          ...(environmentSetup ? { environmentSetup } : {}),
          checkpoint: live.commit,
          signal,
        }),
      );
    } finally {
      live.close();
      stopSessionInputSync(run);
    }
    // A checkpoint the harness did not await still finishes before the final commit starts.
    await live.drain();
    if (run.outcome) throw run.outcome.error;
    if (result.type === "aborted") throw run.loseLease("harness_aborted", { stage });
  },
};

/** The harness declaration with `added` on top of its process's own environment. */
function withVariables(
  driver: ManagedRuntimeProfile["driver"],
  added: Readonly<Record<string, string>> | undefined,
): ManagedRuntimeProfile["driver"] {
  if (!added || Object.keys(added).length === 0) return driver;
  if (driver.type === "ama_worker") {
    return { ...driver, process: { ...driver.process, env: { ...driver.process.env, ...added } } };
  }
  return {
    ...driver,
    supervisor: { ...driver.supervisor, env: { ...driver.supervisor.env, ...added } },
  };
}
