import {
  credentialEgressCase,
  descriptorCase,
  driftCase,
  livePortsCase,
  runtimeCheckpointCase,
  supervisedLaneCase,
} from "./admission-cases.js";
import { catalogRowCase } from "./catalog-row-case.js";
import type { ConformanceCaseImplementations } from "./case-definition.js";
import { guestEnvironmentCase, tokenRedactionCase } from "./credential-cases.js";
import {
  forkCase,
  heartbeatCase,
  leaseCase,
  orphanCase,
  reapCase,
  suspendCase,
  terminateCase,
} from "./lifecycle-cases.js";
import { memoryStoresCase } from "./memory-store-cases.js";
import { outputsCase, workspacePersistenceCase } from "./persistence-cases.js";
import {
  bytesCase,
  duplexCase,
  execExitCodeCase,
  readinessCase,
  workspaceFilesCase,
} from "./process-cases.js";

/** How each catalog case runs. The `satisfies` clause fails to compile when a case lacks an implementation. */
export const CONFORMANCE_CASE_IMPLEMENTATIONS = {
  "catalog.row": catalogRowCase,
  "admission.descriptor": descriptorCase,
  "admission.live-ports": livePortsCase,
  "admission.drift": driftCase,
  "admission.credential-egress": credentialEgressCase,
  "admission.runtime-checkpoint": runtimeCheckpointCase,
  "admission.supervised-lane": supervisedLaneCase,
  "lifecycle.lease-json-safe": leaseCase,
  "lifecycle.heartbeat-lost": heartbeatCase,
  "lifecycle.terminate-idempotent": terminateCase,
  "lifecycle.reap-serialized": reapCase,
  "lifecycle.orphan-retry": orphanCase,
  "lifecycle.suspend": suspendCase,
  "lifecycle.fork-unsupported": forkCase,
  "processes.exec-exit-code": execExitCodeCase,
  "processes.workspace-files": workspaceFilesCase,
  "processes.bytes-io": bytesCase,
  "processes.duplex-stdin": duplexCase,
  "persistence.workspace": workspacePersistenceCase,
  "persistence.outputs": outputsCase,
  "persistence.memory-stores": memoryStoresCase,
  "credentials.guest-env": guestEnvironmentCase,
  "credentials.token-redaction": tokenRedactionCase,
  "readiness.lease-gated": readinessCase,
} as const satisfies ConformanceCaseImplementations;
