import type {
  CredentialEgressBinding,
  CredentialEgressPort,
  RuntimeResourceFence,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { type Settled, cleanupCall } from "../transaction/port-call.js";
import type { RunContext } from "../host/run-context.js";

/** What release and revoke both name: the run's scope and the binding with the fence it was prepared under. */
export interface EgressTarget {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly binding: CredentialEgressBinding;
}

/**
 * Calls the credential egress port as a cleanup call of `stage` on the binding the run prepared;
 * `null` when the run prepared none or has no egress port.
 */
export async function credentialEgressCall(
  run: RunContext,
  stage: string,
  call: (port: CredentialEgressPort, target: EgressTarget) => Promise<void>,
): Promise<Settled<void> | null> {
  const { egress } = run;
  const port = run.options.credentialEgress;
  if (!egress || !port) return null;
  return cleanupCall(run, stage, () =>
    call(port, { scope: run.scope, fence: egress.fence, binding: egress.binding }),
  );
}
