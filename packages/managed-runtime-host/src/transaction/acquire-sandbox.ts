import { InvalidRequestError, type ManagedSandboxLease, parseManagedSandboxLease } from "@open-managed-agents/runtime-resource-contract";
import { markHostError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "sandbox-acquire";

/** Starts compute, unless a runtime checkpoint restore already produced a lease. */
export const acquireSandbox: RunStep = {
  stage,
  applies: (run) => run.lease === null,
  async run(run) {
    const fence = run.requireFence();
    const workspace = run.workspaceBinding;
    if (!workspace) return;
    const pending = Promise.resolve().then(() =>
      run.options.sandbox.acquire({
        scope: run.scope,
        fence,
        plan: run.requireAdmission().plan,
        workspace,
        outputs: run.outputBinding,
        credentialEgress: run.egress?.binding ?? null,
        signal: run.signal,
      }),
    );
    // Cleanup settles an acquire the run stopped waiting for, so a late lease is still terminated.
    run.pendingLease = pending;
    const lease = await callPort(run, stage, () => pending);
    run.pendingLease = null;
    run.lease = lease;
    checkLease(run, lease, stage);
    run.log.info("sandbox.acquired", { provider: lease.provider, runtimeId: lease.runtimeId, generation: fence.generation });
  },
};

/** A lease must be JSON-safe and carry no fence token. */
export function checkLease(run: RunContext, lease: ManagedSandboxLease, stage: string): void {
  parseManagedSandboxLease(lease);
  const serialized = JSON.stringify(lease);
  if (run.secrets().some((token) => serialized.includes(token))) {
    throw markHostError(new InvalidRequestError({ message: "the sandbox lease carries the fence token", context: { stage } }));
  }
}
