import type { Sandbox } from "@cloudflare/sandbox";
import type { WorkRunner } from "./work/work-runner.js";

/**
 * The Worker's bindings (wrangler.jsonc). Secrets: `API_TOKEN`, and for presigned backups
 * `R2_ACCESS_KEY_ID` and `R2_SECRET_ACCESS_KEY` (read by the Sandbox Durable Object itself).
 */
export type WorkerEnv = {
  readonly Sandbox: DurableObjectNamespace<Sandbox>;
  readonly WORK_RUNNER: DurableObjectNamespace<WorkRunner>;
  readonly DB: D1Database;
  readonly OUTPUTS_BUCKET: R2Bucket;
  readonly BACKUP_BUCKET: R2Bucket;
  /** Bearer token every API request must carry. Without it the Worker refuses every request. */
  readonly API_TOKEN?: string;
  readonly WORKSPACE_ID?: string;
  readonly ENVIRONMENT_ID?: string;
  readonly LEASE_TTL_MS?: string;
  readonly ORPHAN_REAP_LIMIT?: string;
  readonly SANDBOX_LOCAL_BACKUPS?: string;
  /** Presigned backup uploads (read by the Sandbox Durable Object): account, bucket name and R2 keys. */
  readonly CLOUDFLARE_ACCOUNT_ID?: string;
  readonly CLOUDFLARE_R2_ACCOUNT_ID?: string;
  readonly BACKUP_BUCKET_NAME?: string;
  readonly R2_ACCESS_KEY_ID?: string;
  readonly R2_SECRET_ACCESS_KEY?: string;
  readonly CONTROL_PLANE_BASE_URL?: string;
  readonly LOG_LEVEL?: string;
  /** The container class's `instance_type`; keep it equal to wrangler.jsonc's. @default "standard-1" */
  readonly CONTAINER_INSTANCE_TYPE?: string;
  /** Named profiles: an object (a JSON var) or its JSON text. */
  readonly PROFILES?: unknown;
};
