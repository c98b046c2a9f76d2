import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
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
  /** Directory on the sandbox's PATH holding `oma-ama-worker`. */
  readonly binDirectory: string;
  /** Where the demo reads the published output manifests back. */
  readonly store: BlobStore;
  /** `OMA_CHECKPOINT_STORE` for the service; unset for R2, which the bridge driver's env form names. */
  readonly checkpointStoreUrl: string | undefined;
  readonly storeDescription: string;
  readonly workDirectory: string;
  stop(): Promise<void>;
}

const UNCONFINED_RUNTIME_ERROR_MARKER = Symbol.for(
  "open-managed-agents.demo-unconfined-runtime-error",
);

/** The demo refuses to run agent tool calls outside a confinement; this says why. */
export class UnconfinedRuntimeError extends Error {
  constructor(mode: string | undefined) {
    super(
      `the local container runtime runs in confinement "${mode ?? "unknown"}", not "bubblewrap": the agent's tool ` +
        "calls would run on this machine with the demo's rights, so the demo does not run them. Install bubblewrap " +
        "(scripts/bootstrap.sh does) and run the demo again.",
    );
    this.name = "UnconfinedRuntimeError";
    Object.defineProperty(this, UNCONFINED_RUNTIME_ERROR_MARKER, { value: true });
  }

  /** True for an {@link UnconfinedRuntimeError} from whichever copy of this module built it. */
  static isInstance(error: unknown): error is UnconfinedRuntimeError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[UNCONFINED_RUNTIME_ERROR_MARKER] === true
    );
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `controlPlaneUrl` is the Managed Agents API the sandbox's worker calls: the local stack's containers have
 * no network of their own, so the filtering proxy lets that one origin through, as Cloudflare's let the
 * internet through (the agent's tool calls can reach it too, but hold no credential for it).
 */
export async function openDemoEnvironment(
  env: Env,
  controlPlaneUrl: string,
): Promise<DemoEnvironment> {
  const workDirectory = await mkdtemp(join(tmpdir(), "oma-demo-"));
  const remoteBridge =
    env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] && env[CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey];
  // The Cloudflare image installs the bin in /usr/local/bin; locally it goes where the confined runtime
  // sees it (the host's /opt, copy-on-write), and onto the runtime's PATH for the readiness probe.
  const binDirectory = remoteBridge
    ? "/usr/local/bin"
    : dirname(await installAmaWorkerBin(env.OMA_AMA_WORKER_BIN_DIR));
  if (!remoteBridge) process.env.PATH = `${binDirectory}${delimiter}${process.env.PATH ?? ""}`;
  // Asking for the unconfined runtime exists to show the refusal below; the demo never runs tools in it.
  const unconfined = env.OMA_DEMO_LOCAL_CONFINEMENT === "unconfined-unsafe";
  const local = remoteBridge
    ? null
    : await startLocalBridge(
        unconfined
          ? { confinement: "unconfined-unsafe" }
          : { egressAllowList: [new URL(controlPlaneUrl).host] },
      );
  // A Cloudflare sandbox is its own VM; a local one must be inside bubblewrap before any tool call runs.
  const confinement = local?.containerServer.confinement;
  if (local && confinement !== "bubblewrap") {
    await local.stop();
    throw new UnconfinedRuntimeError(confinement);
  }
  const useR2 = Boolean(
    env.R2_ACCESS_KEY_ID ||
      env.R2_SECRET_ACCESS_KEY ||
      env.R2_ENDPOINT ||
      env[CLOUDFLARE_BRIDGE_ENV_KEYS.bucket],
  );
  const blobDirectory = join(workDirectory, "blobs");
  const store = useR2
    ? createR2BlobStoreFromEnv(env)
    : createFsBlobStore({ rootDir: blobDirectory });
  return {
    bridgeUrl: local ? local.url : (env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] as string),
    apiKey: local ? local.apiKey : (env[CLOUDFLARE_BRIDGE_ENV_KEYS.apiKey] as string),
    bridgeDescription: local
      ? `local stack at ${local.url} (Cloudflare's bridge Worker in workerd over the local container runtime, confined in ${confinement})`
      : `Cloudflare Sandbox Bridge at ${new URL(env[CLOUDFLARE_BRIDGE_ENV_KEYS.url] as string).origin}`,
    binDirectory,
    store,
    checkpointStoreUrl: useR2 ? undefined : pathToFileURL(blobDirectory).href,
    storeDescription: useR2
      ? `R2 bucket ${env[CLOUDFLARE_BRIDGE_ENV_KEYS.bucket]}`
      : `filesystem blob store in ${blobDirectory}`,
    workDirectory,
    stop: async () => {
      await local?.stop();
    },
  };
}
