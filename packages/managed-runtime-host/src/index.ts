export * from "./time.js";
export * from "./logger.js";
export * from "./plan.js";
export type { ManagedRuntimeHost, ManagedRuntimeHostOptions, ManagedRuntimeRunInput, ManagedRuntimeRunResult } from "./host/types.js";
export { createManagedRuntimeHost } from "./host/create-host.js";
export { AMA_WORKER_HARNESS_VERSION, harnessVersionOf, runtimeIdentityOf } from "./host/runtime-identity.js";
export { CLEANUP_STAGES, TRANSACTION_STAGES } from "./transaction/order.js";
