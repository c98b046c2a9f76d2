import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { createR2BlobStoreFromEnv } from "@open-managed-agents/blob-store/s3";
import { startLocalBridge } from "@open-managed-agents/local-container";
import { CLOUDFLARE_BRIDGE_ENV_KEYS } from "@open-managed-agents/managed-runtime-cloudflare-bridge";

/** Where the demo runs: a bridge and a blob store, each local unless the environment names real ones. */
export interface DemoEnvironment {
  readonly bridgeUrl: string;
  readonly apiKey: string;
  readonly bridgeDescription: string;
  readonly store: BlobStore;
  readonly storeDescription: string;
  readonly workDirectory: string;
  stop(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

export async function openDemoEnvironment(env: Env): Promise<DemoEnvironment> {
  const workDirectory = await mkdtemp(join(tmpdir(), "oma-demo-"));
  const remoteBridge = env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] && env[CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey];
  const local = remoteBridge ? null : await startLocalBridge();
  const useR2 = Boolean(env.R2_ACCESS_KEY_ID || env.R2_SECRET_ACCESS_KEY || env.R2_ENDPOINT || env[CLOUDFLARE_BRIDGE_ENV_KEYS.bucket]);
  const store = useR2 ? createR2BlobStoreFromEnv(env) : createFsBlobStore({ rootDir: join(workDirectory, "blobs") });
  return {
    bridgeUrl: local ? local.url : (env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] as string),
    apiKey: local ? local.apiKey : (env[CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey] as string),
    bridgeDescription: local
      ? `local stack at ${local.url} (Cloudflare's bridge Worker in workerd over the local container runtime)`
      : `Cloudflare Sandbox Bridge at ${new URL(env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] as string).origin}`,
    store,
    storeDescription: useR2 ? `R2 bucket ${env[CLOUDFLARE_BRIDGE_ENV_KEYS.bucket]}` : `filesystem blob store in ${join(workDirectory, "blobs")}`,
    workDirectory,
    stop: async () => {
      await local?.stop();
    },
  };
}
