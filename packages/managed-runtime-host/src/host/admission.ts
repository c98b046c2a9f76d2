import {
  CapabilityUnsupportedError,
  type CredentialEgressRequirement,
  hasEnvironmentPackages,
  type RuntimeSessionSnapshot,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError } from "../errors.js";
import { resolveManagedRuntimePlan } from "../plan.js";
import { callPort } from "../transaction/port-call.js";

const unsignalled = { unsignalled: true } as const;
import type { Admission, RunContext } from "./run-context.js";
import { harnessVersionOf, runtimeIdentityOf } from "./runtime-identity.js";

/**
 * Everything decided before the fence is taken: session-input ownership, the egress requirement, the
 * plan from the four live capability sets, and the presence and enforcement of optional ports.
 * Throws a typed error; nothing has been allocated yet.
 */
export async function admit(run: RunContext): Promise<Admission> {
  const { options, profile, session, scope } = run;
  if (
    session &&
    session.resources.length > 0 &&
    !options.sessionInputs &&
    needsMaterializer(session, profile.driver.type)
  ) {
    throw refusal(
      "session_inputs",
      "the session has resources that need a session-input materializer, and none is configured",
    );
  }
  if (hasEnvironmentPackages(run.environmentPackages) && !options.environmentPackages) {
    throw refusal(
      "environment_packages",
      "the environment lists packages, and no environment-packages installer is configured",
    );
  }
  admitMemoryStores(run);
  const egressRequirement = egressRequirementOf(session, profile.credentialEgress?.requirement);

  const [sandbox, workspace, outputs, harness] = await Promise.all([
    callPort(run, "sandbox-capabilities", () => options.sandbox.capabilities(scope), unsignalled),
    callPort(
      run,
      "workspace-capabilities",
      () => options.workspace.capabilities(scope),
      unsignalled,
    ),
    callPort(run, "outputs-capabilities", () => options.outputs.capabilities(scope), unsignalled),
    callPort(
      run,
      "harness-driver-capabilities",
      () => options.harnessDriver.driverCapabilities(scope),
      unsignalled,
    ),
  ]);
  const plan = resolveManagedRuntimePlan(profile, { sandbox, workspace, outputs, harness });

  if (plan.runtimeCheckpoint !== null && !options.runtimeCheckpoint) {
    throw refusal(
      "runtime_checkpoint",
      `the plan takes a ${plan.runtimeCheckpoint} runtime checkpoint but no runtime-checkpoint port is configured`,
    );
  }
  if (egressRequirement === "required") {
    const egress = options.credentialEgress;
    if (!egress)
      throw refusal(
        "credential_egress",
        "credential egress is required but no credential-egress port is configured",
      );
    const capabilities = await callPort(
      run,
      "credential-egress-capabilities",
      () => egress.capabilities(scope),
      unsignalled,
    );
    if (capabilities.enforcement !== "enforced") {
      throw refusal(
        "credential_egress",
        `credential egress is required but the port only offers ${capabilities.enforcement} enforcement`,
      );
    }
  }
  return {
    plan,
    egressRequirement,
    harnessVersion: harnessVersionOf(profile.driver),
    runtimeIdentity: runtimeIdentityOf(profile.driver),
  };
}

/** A run with memory stores needs a memory-stores port, and a `file_sync` one needs the control plane's memory access. */
function admitMemoryStores(run: RunContext): void {
  if (run.memoryStores.length === 0) return;
  const port = run.options.memoryStores;
  if (!port)
    throw refusal(
      "memory_stores",
      "the run carries memory stores, and no memory-stores port is configured",
    );
  if (port.mode === "file_sync" && !run.sessionInputAccess?.memories) {
    throw refusal(
      "memory_stores",
      "file-sync memory stores need the control plane's memory access (sessionInputAccess.memories)",
    );
  }
}

/** The AMA worker owns memory stores itself; anything else needs the host's materializer. */
function needsMaterializer(session: RuntimeSessionSnapshot, driver: string): boolean {
  return (
    driver === "openma_supervised" ||
    session.resources.some((resource) => resource.type !== "memory_store")
  );
}

/** A session with a GitHub repository always needs enforced egress: the repository credential must not enter the box. */
function egressRequirementOf(
  session: RuntimeSessionSnapshot | undefined,
  profileRequirement: CredentialEgressRequirement | undefined,
) {
  if (session?.resources.some((resource) => resource.type === "github_repository"))
    return "required" as const;
  return profileRequirement ?? "disabled";
}

function refusal(requirement: string, message: string): CapabilityUnsupportedError {
  return markHostError(
    new CapabilityUnsupportedError({ message, context: { requirement, stage: "admission" } }),
  );
}
