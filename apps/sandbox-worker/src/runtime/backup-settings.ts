import {
  InvalidConfigError,
  type ManagedRuntimeProfile,
} from "@open-managed-agents/runtime-resource-contract";
import type { WorkerConfig } from "../config.js";

/**
 * Refuses, before anything is queued, a work item whose workspace outlives it (`durable` or
 * `continuable`) when presigned backups lack a setting the Sandbox Durable Object needs. Names the
 * first missing key, never a value.
 */
export function requireBackupSettings(config: WorkerConfig, profile: ManagedRuntimeProfile): void {
  if (config.localBackups || profile.workspace.requirement === "ephemeral") return;
  const missing = config.missingBackupSetting;
  if (missing !== null) {
    throw new InvalidConfigError({
      message: `workspace backups upload through presigned R2 URLs and need ${missing} in the Worker environment; it is missing (SANDBOX_LOCAL_BACKUPS=true moves them through the binding, for local development)`,
      context: { field: missing },
    });
  }
}
