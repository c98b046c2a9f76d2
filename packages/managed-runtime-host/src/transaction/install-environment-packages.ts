import {
  type EnvironmentSetupResult,
  hasEnvironmentPackages,
} from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "environment-packages-install";
const setups = new WeakMap<RunContext, EnvironmentSetupResult>();

/**
 * Installs the environment's packages once the workspace, outputs and egress are attached, before
 * session inputs and the harness. A failed install fails the run at this stage.
 */
export const installEnvironmentPackages: RunStep = {
  stage,
  applies: (run) => hasEnvironmentPackages(run.environmentPackages),
  async run(run) {
    const port = run.options.environmentPackages;
    const { lease, environmentPackages: packages } = run;
    if (!port || !lease || !packages) return;
    const fence = run.requireFence();
    const result = await callPort(run, stage, (signal) =>
      port.install({
        scope: run.scope,
        fence,
        sandbox: lease,
        packages,
        imageAlias: run.sandboxImageAlias ?? null,
        signal,
      }),
    );
    setups.set(run, result);
    for (const skipped of result.skipped)
      run.log.warn("environment.packages.skipped", {
        ...run.scope,
        manager: skipped.manager,
        spec: skipped.spec,
        reason: skipped.reason,
      });
    run.log.info("environment.packages", {
      ...run.scope,
      mode: result.mode,
      pathEntries: result.pathEntries.length,
    });
  },
};

/** The setup result the harness runs with, when the run installed packages. */
export function environmentSetupOf(run: RunContext): EnvironmentSetupResult | undefined {
  return setups.get(run);
}
