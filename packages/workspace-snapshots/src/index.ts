export {
  createWorkspaceSnapshots,
  type SessionInput,
  type WorkspaceSnapshots,
} from "./workspace-snapshots.js";
export type { WorkspaceSnapshotsOptions } from "./options.js";
export type { SnapshotSandbox, SandboxRunResult } from "./sandbox-port.js";
export { createLocalSnapshotSandbox } from "./local-sandbox.js";
export type { SnapshotRef } from "./capture.js";
export type { SnapshotProgress, SnapshotStep } from "./progress.js";
export type { PreparedRestore } from "./restore.js";
export type { SweepResult } from "./sweep.js";
export type { Codec } from "./codec.js";
export { sessionKeyOf } from "./keys.js";
export { pruneArguments } from "./prune.js";
export { MAX_HOLE_BYTES, MAX_PATH_BYTES } from "./refusals.js";
export { FORMAT_VERSION, type SnapshotObject, type TreeEntry, type TreeObject } from "./objects.js";
