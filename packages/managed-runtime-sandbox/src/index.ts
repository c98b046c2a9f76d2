export {
  createProviderManagedRuntime,
  describeProviderManagedRuntime,
  type ProviderManagedRuntime,
} from "./provider-runtime.js";
export {
  createProviderManagedRuntimeDriver,
  NO_CREDENTIAL_EGRESS,
  type ProviderManagedRuntimeDriverOptions,
  type ProviderManagedRuntimeExtraResources,
} from "./provider-driver.js";
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_OUTPUT_FILES,
  type ProviderManagedRuntimeOptions,
  type ProviderManagedRuntimeOutputsOptions,
  type ProviderManagedRuntimeReadinessOptions,
  type ProviderWorkspaceStrategy,
} from "./options.js";
export { CHECKPOINT_METADATA_KEY, CHECKPOINT_HASH_METADATA_KEY } from "./checkpoint-handle.js";
export { HARNESS_VERSION_METADATA_KEY } from "./sandbox-port.js";
export { WORKSPACE_STRATEGY_METADATA_KEY } from "./workspace-port.js";
export { OUTPUT_PREFIX_METADATA_KEY } from "./outputs/outputs-port.js";
export {
  MAX_OUTPUT_MANIFEST_BYTES,
  OUTPUT_ENTRIES_METADATA_KEY,
  OUTPUT_MANIFEST_KEY_METADATA_KEY,
  readOutputManifest,
  sessionOutputManifestSchema,
  type SessionOutputManifest,
} from "./outputs/output-manifest.js";
export { outputBlobKey, outputManifestKey } from "./outputs/output-keys.js";
export { stableJson } from "./digest.js";
export {
  DEFAULT_DESTROYED_SANDBOXES,
  type DestroyedSandboxes,
  createDestroyedSandboxes,
} from "./destroyed-sandboxes.js";
export {
  MEMORY_PROJECTION_ROOT,
  type MemoryFileSync,
  type MemorySyncConflict,
  type MemorySyncReport,
  createMemoryFileSync,
} from "./memory/memory-file-sync.js";
export { createProviderMemoryStoresPort } from "./memory/memory-stores-port.js";
export {
  type BlobMemoryAccessOptions,
  createBlobMemoryAccess,
} from "./memory/blob-memory-access.js";
