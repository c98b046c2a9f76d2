import type { BlobStore } from "@open-managed-agents/blob-store";
import { createR2BlobStoreFromEnv } from "@open-managed-agents/blob-store/s3";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import type { CloudflareBridgeManagedRuntimeOptions } from "./options.js";

/** Environment variables a deployment sets for the bridge driver. */
export const CLOUDFLARE_BRIDGE_ENV_KEYS = {
  url: "OMA_CLOUDFLARE_BRIDGE_URL",
  apiKey: "OMA_CLOUDFLARE_BRIDGE_API_KEY",
  runtimeId: "OMA_CLOUDFLARE_BRIDGE_RUNTIME_ID",
  bucket: "OMA_CLOUDFLARE_R2_BUCKET",
} as const;

export type CloudflareBridgeEnv = Readonly<Record<string, string | undefined>>;

/**
 * Maps a deployment's environment to driver options. `OMA_CLOUDFLARE_BRIDGE_URL` and
 * `OMA_CLOUDFLARE_BRIDGE_API_KEY` are required. `OMA_CLOUDFLARE_BRIDGE_RUNTIME_ID` names this deployment's
 * bridge runtime and namespaces its checkpoint and output keys, so several deployments can share a bucket.
 * With `OMA_CLOUDFLARE_R2_BUCKET` (and `R2_ENDPOINT`, `R2_ACCESS_KEY_ID`, `R2_SECRET_ACCESS_KEY`) the
 * checkpoint and output stores are that R2 bucket; otherwise `stores` must supply them. Missing keys are
 * reported by name, all at once, never with values.
 */
export function cloudflareBridgeOptionsFromEnv(
  env: CloudflareBridgeEnv,
  stores: { readonly checkpointStore?: BlobStore; readonly outputStore?: BlobStore | null } = {},
): CloudflareBridgeManagedRuntimeOptions {
  const missing: string[] = [
    CLOUDFLARE_BRIDGE_ENV_KEYS.url,
    CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey,
  ].filter((key) => !env[key]);
  if (!stores.checkpointStore && !env[CLOUDFLARE_BRIDGE_ENV_KEYS.bucket])
    missing.push(CLOUDFLARE_BRIDGE_ENV_KEYS.bucket);
  if (missing.length > 0) {
    throw new InvalidConfigError({
      message: `missing environment variables: ${missing.join(", ")}`,
      context: { missing },
    });
  }
  const r2 = stores.checkpointStore
    ? null
    : createR2BlobStoreFromEnv(env, { bucketKey: CLOUDFLARE_BRIDGE_ENV_KEYS.bucket });
  const checkpointStore = stores.checkpointStore ?? (r2 as BlobStore);
  const runtimeId = env[CLOUDFLARE_BRIDGE_ENV_KEYS.runtimeId];
  const namespace = runtimeId ? `/${runtimeId}` : "";
  return {
    baseUrl: env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] as string,
    apiKey: env[CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey] as string,
    checkpointStore,
    outputStore: stores.outputStore === undefined ? checkpointStore : stores.outputStore,
    checkpointKeyPrefix: `cloudflare-bridge-workspaces${namespace}`,
    outputKeyPrefix: `cloudflare-bridge-output-candidates${namespace}`,
  };
}
