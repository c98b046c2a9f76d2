export {
  type DrainSummary,
  type ManagedEnvironmentWorker,
  createManagedEnvironmentWorker,
} from "./worker.js";
export type {
  ConflictRetryOptions,
  ManagedEnvironmentSetup,
  ManagedEnvironmentWorkerOptions,
  ManagedRuntimeHostFactory,
  WorkItemOutcome,
  WorkItemReport,
} from "./options.js";
export {
  type InstallationDriver,
  type ManagedEnvironmentWorkerInstallation,
  type ManagedEnvironmentWorkerInstallationMode,
  type OtherInstallationOptions,
  type RuntimeHostInstallationOptions,
  createManagedEnvironmentWorkerInstallation,
} from "./installation.js";
export type { ManagedAgentsClient } from "./sdk-client.js";
export type { WebhookReceipt, WebhookRequest } from "./webhook.js";
export type { HostedInferenceOptions } from "./harness-env.js";
export { type DecodedWorkSecret, decodeWorkSecret } from "./work-secret.js";
export { NO_HEARTBEAT } from "./work-lease.js";
