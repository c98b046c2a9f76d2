import type { WorkerBindings } from "./bindings.js";

/**
 * The Worker's environment (wrangler.jsonc): its bindings and its variables. Only the entry and
 * `config.ts` read it; everything else gets the parsed settings and the bindings. Secrets: `API_TOKEN`,
 * `ENVIRONMENT_KEY` and `WEBHOOK_SECRET` of the self-hosted environment, and for presigned backups
 * `R2_ACCESS_KEY_ID` and `R2_SECRET_ACCESS_KEY` (read by the Sandbox Durable Object itself).
 */
export type WorkerEnv = WorkerBindings & {
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
  /** The self-hosted environment's key (a secret): claims work. */
  readonly ENVIRONMENT_KEY?: string;
  /** Standard Webhooks signing secret of the environment's webhook (a secret, `whsec_…`). */
  readonly WEBHOOK_SECRET?: string;
  /** Managed Agents API origin. @default https://api.anthropic.com */
  readonly MANAGED_AGENTS_BASE_URL?: string;
  /** Name in `PROFILES` of the profile claimed session items run. @default ama-worker */
  readonly ENVIRONMENT_PROFILE?: string;
  /** Items running at once, across triggers, before a pass stops claiming. @default 10 */
  readonly ENVIRONMENT_MAX_CLAIMS?: string;
  /** "true" in a certification build only: serves `POST /v1/certification/conformance`. @default "false" */
  readonly CERTIFICATION?: string;
  /** Named profiles: an object (a JSON var) or its JSON text. */
  readonly PROFILES?: unknown;
};
