import { InvalidConfigError, type ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerConfig } from "../config.js";
import type { WorkerEnv } from "../env.js";

const present = (value: string | undefined): boolean => typeof value === "string" && value !== "";

/**
 * Refuses, before anything is queued, a work item whose workspace outlives it (`durable` or
 * `continuable`) when presigned backups lack a setting the Sandbox Durable Object needs. Names the
 * first missing key, never a value.
 */
export function requireBackupSettings(env: WorkerEnv, config: WorkerConfig, profile: ManagedRuntimeProfile): void {
  if (config.localBackups || profile.workspace.requirement === "ephemeral") return;
  const missing = [
    ["CLOUDFLARE_ACCOUNT_ID", present(env.CLOUDFLARE_ACCOUNT_ID) || present(env.CLOUDFLARE_R2_ACCOUNT_ID)],
    ["BACKUP_BUCKET_NAME", present(env.BACKUP_BUCKET_NAME)],
    ["R2_ACCESS_KEY_ID", present(env.R2_ACCESS_KEY_ID)],
    ["R2_SECRET_ACCESS_KEY", present(env.R2_SECRET_ACCESS_KEY)],
  ].find(([, ok]) => !ok)?.[0];
  if (typeof missing === "string") {
    throw new InvalidConfigError({
      message: `workspace backups upload through presigned R2 URLs and need ${missing} in the Worker environment; it is missing (SANDBOX_LOCAL_BACKUPS=true moves them through the binding, for local development)`,
      context: { field: missing },
    });
  }
}
