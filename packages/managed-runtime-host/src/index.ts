export * from "./time.js";
export * from "./logger.js";
export * from "./plan.js";
export type {
  ManagedRuntimeHost,
  ManagedRuntimeHostOptions,
  ManagedRuntimeRunInput,
  ManagedRuntimeRunPublication,
  ManagedRuntimeRunResult,
} from "./host/types.js";
export { createManagedRuntimeHost } from "./host/create-host.js";
export {
  AMA_WORKER_HARNESS_VERSION,
  harnessVersionOf,
  runtimeIdentityOf,
} from "./host/runtime-identity.js";
export { CLEANUP_STAGES, TRANSACTION_STAGES } from "./transaction/order.js";
export { MAX_CHECKPOINT_ID_LENGTH } from "./transaction/live-checkpoint.js";
export type {
  ManagedRuntimeProviderPrepareInput,
  ManagedRuntimeProviderRegistry,
  ManagedRuntimeProviderRegistryOptions,
  PreparedManagedRuntimeProvider,
} from "./registry/types.js";
export { createManagedRuntimeProviderRegistry } from "./registry/provider-registry.js";
export {
  type LoadManagedRuntimeProviderDriverOptions,
  loadManagedRuntimeProviderDriver,
} from "./loader/load-driver.js";
export { assertSpecificationVersion } from "./loader/specification-version.js";
export {
  type SupervisedSandboxHarnessDriverOptions,
  createSupervisedSandboxHarnessDriver,
} from "./supervisor/supervised-harness-driver.js";
export { composeSandboxHarnessDrivers } from "./supervisor/compose-harness-drivers.js";
export * from "./stores/index.js";
export * from "./sql/index.js";
export {
  type ManagedRuntimeOrphanReconciler,
  type ManagedRuntimeOrphanReconcilerOptions,
  type OrphanReapBackoff,
  type OrphanReconcileSummary,
  createManagedRuntimeOrphanReconciler,
} from "./orphan-reconciler.js";
export {
  type DriverReaperOptions,
  createDriverReaper,
  createDriverSalvage,
} from "./reconciler/driver-reaper.js";
export type { ReconcilerSalvage, SalvageOutcome } from "./reconciler/salvage-sandbox.js";
export type { JournalReconcileSummary } from "./reconciler/reap-journal.js";
