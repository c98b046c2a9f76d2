export { CLOUDFLARE_DRIVER_VERSION, CLOUDFLARE_PROVIDER } from "./provider-id.js";
export {
  type CloudflareDriverFactoryOptions,
  createCloudflareManagedRuntime,
  createCloudflareManagedRuntimeDriver,
  createManagedRuntimeProviderDriver,
} from "./driver.js";
export { CLOUDFLARE_SANDBOX_CAPABILITIES } from "./cloudflare-ports.js";
export {
  DEFAULT_BACKUP_TTL_SEC,
  DEFAULT_LEASE_TTL_MS,
  DEFAULT_OUTPUT_KEY_PREFIX,
  DEFAULT_USAGE_RECORD_TIMEOUT_MS,
  FILES_BUCKET_ENV_KEY,
  MEMORY_MOUNT_ENV_KEYS,
  WORKSPACE_MOUNT_ENV_KEYS,
  type CloudflareManagedRuntimeEnv,
  type CloudflareManagedRuntimeOptions,
  type CloudflareUsageOptions,
} from "./options.js";
export { MAX_TRACKED_CONTAINERS } from "./usage/usage-recording.js";
export { MEMORY_MOUNT_ROOT, memoryStorePrefix } from "./memory/memory-mount.js";
export {
  type CloudflareRuntime,
  createCloudflareRuntime,
  DEFAULT_EXEC_TIMEOUT_MS,
} from "./runtime/cloudflare-runtime.js";
export {
  createCloudflareSandboxProvider,
  newRuntimeId,
  type CloudflareSandboxProviderOptions,
} from "./provider.js";
export {
  CLOUDFLARE_CREDENTIAL_EGRESS,
  createCloudflareCredentialEgressPort,
} from "./egress/egress-port.js";
export type {
  CloudflareCredentialVault,
  CredentialVaultDecision,
} from "./egress/credential-vault.js";
export { CREDENTIAL_EGRESS_HANDLER, REVOKED_EGRESS_HANDLER } from "./egress/outbound-names.js";
export { sessionWorkspacePrefix } from "./workspace/durable-mount.js";
export { CLOUDFLARE_SANDBOX_PORT_FACTS } from "./sandbox-port-facts.js";
export type * from "./sandbox/cloudflare-sandbox.js";
