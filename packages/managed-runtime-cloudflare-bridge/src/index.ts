export {
  CLOUDFLARE_BRIDGE_DRIVER_VERSION,
  CLOUDFLARE_BRIDGE_PROVIDER,
  CLOUDFLARE_BRIDGE_SANDBOX_PORT_FACTS,
  createCloudflareBridgeManagedRuntime,
} from "./driver.js";
export { CLOUDFLARE_BRIDGE_ENV_KEYS, cloudflareBridgeOptionsFromEnv } from "./env-options.js";
export {
  type CloudflareBridgeDriverFactoryOptions,
  createManagedRuntimeProviderDriver,
} from "./loader-entry.js";
export type { CloudflareBridgeManagedRuntimeOptions } from "./options.js";
export type { ContainerRuntimeCheck } from "./runtime/runtime-checking-client.js";
export type { CheckpointProgress } from "./checkpoint/bridge-checkpointer.js";
export {
  type BridgeClient,
  type BridgeClientOptions,
  type BridgeExecEvent,
  createBridgeClient,
} from "./wire/bridge-client.js";
export type { RetryPolicy } from "./wire/retry.js";
export {
  type SweepBridgeCheckpointBlobsOptions,
  type SweepResult,
  sweepBridgeCheckpointBlobs,
} from "./checkpoint/sweep.js";
export {
  DEFAULT_MEMORY_BUDGET_BYTES,
  type MemoryBudget,
  type MemoryLease,
  createMemoryBudget,
  processMemoryBudget,
} from "./memory-budget.js";
