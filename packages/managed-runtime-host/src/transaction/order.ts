import { releaseCredentialEgress } from "../cleanup/release-credential-egress.js";
import { releaseFence } from "../cleanup/release-fence.js";
import { releaseOutputs } from "../cleanup/release-outputs.js";
import { releaseWorkspace } from "../cleanup/release-workspace.js";
import { revokeCredentialEgress } from "../cleanup/revoke-credential-egress.js";
import { settleAbandonedLease } from "../cleanup/settle-abandoned-lease.js";
import { settleJournal } from "../cleanup/settle-journal.js";
import { terminateSandbox } from "../cleanup/terminate-sandbox.js";
import { acquireSandbox } from "./acquire-sandbox.js";
import { attachCredentialEgress } from "./attach-credential-egress.js";
import { attachOutputs } from "./attach-outputs.js";
import { attachWorkspace } from "./attach-workspace.js";
import { checkpointWorkspace } from "./checkpoint-workspace.js";
import { createRuntimeCheckpoint } from "./create-runtime-checkpoint.js";
import { finalizeOutputs } from "./finalize-outputs.js";
import { installEnvironmentPackages } from "./install-environment-packages.js";
import { prepareCredentialEgress } from "./prepare-credential-egress.js";
import { prepareOutputs } from "./prepare-outputs.js";
import { materializeWorkspace } from "./materialize-workspace.js";
import { mountMemoryStores } from "./mount-memory-stores.js";
import { publishFinal } from "./publish.js";
import { restoreRuntimeCheckpoint } from "./restore-runtime-checkpoint.js";
import { runHarness } from "./run-harness.js";
import { salvageSession } from "./salvage-session.js";
import { suspendRetainedRuntime } from "./suspend-retained-runtime.js";
import { synchronizeMemoryStoresFinal } from "./synchronize-memory-stores.js";
import { materializeSessionInputs, synchronizeSessionInputsFinal } from "./session-inputs.js";
import type { RunStep } from "./step.js";

/**
 * The normative transaction, after admission and fence acquisition. Each step decides whether it
 * applies to the run; the order itself never changes.
 */
export const TRANSACTION_ORDER: readonly RunStep[] = [
  salvageSession,
  materializeWorkspace,
  prepareOutputs,
  prepareCredentialEgress,
  restoreRuntimeCheckpoint,
  acquireSandbox,
  attachWorkspace,
  attachOutputs,
  attachCredentialEgress,
  mountMemoryStores,
  installEnvironmentPackages,
  materializeSessionInputs,
  runHarness,
  synchronizeSessionInputsFinal,
  synchronizeMemoryStoresFinal,
  suspendRetainedRuntime,
  checkpointWorkspace,
  createRuntimeCheckpoint,
  finalizeOutputs,
  publishFinal,
];

/**
 * Cleanup, run after every transaction that took the fence, whatever its outcome. Every step runs;
 * a failure is recorded in `cleanupErrors` and never changes the result.
 */
export const CLEANUP_ORDER: readonly RunStep[] = [
  revokeCredentialEgress,
  settleAbandonedLease,
  terminateSandbox,
  settleJournal,
  releaseOutputs,
  releaseCredentialEgress,
  releaseWorkspace,
  releaseFence,
];

/** Stage names of {@link TRANSACTION_ORDER}, for documentation and tests. */
export const TRANSACTION_STAGES: readonly string[] = TRANSACTION_ORDER.map((step) => step.stage);
/** Stage names of {@link CLEANUP_ORDER}. */
export const CLEANUP_STAGES: readonly string[] = CLEANUP_ORDER.map((step) => step.stage);
