import type { ManagedRuntimeProviderDriverPort } from "@open-managed-agents/runtime-resource-contract";
import { createProviderManagedRuntimeDriver } from "@open-managed-agents/managed-runtime-sandbox";
import { createBridgeCheckpointer } from "./checkpoint/bridge-checkpointer.js";
import {
  type CloudflareBridgeManagedRuntimeOptions,
  type ResolvedCloudflareBridgeOptions,
  resolveBridgeOptions,
} from "./options.js";
import { createBridgeSandboxProvider } from "./runtime/bridge-provider.js";
import { createRuntimeCheckingClient } from "./runtime/runtime-checking-client.js";
import { createTombstoningClient } from "./runtime/tombstoning-client.js";
import { type BridgeClient, createBridgeClient } from "./wire/bridge-client.js";

/** The provider id in the descriptor, every lease, every checkpoint handle and the conformance catalog. */
export const CLOUDFLARE_BRIDGE_PROVIDER = "cloudflare-bridge";
/** Driver version. */
export const CLOUDFLARE_BRIDGE_DRIVER_VERSION = "0.1.0";

/**
 * Facts about what the bridge can and cannot do, as the conformance catalog records them.
 * The bridge carries no stdin on exec, has no provider lease and no process checkpoint.
 */
export const CLOUDFLARE_BRIDGE_SANDBOX_PORT_FACTS = {
  available: ["http_bridge", "argv_sse_process", "workspace_file_io", "workspace_tar_checkpoint"],
  unavailable: ["interactive_stdin_without_pty", "provider_lease", "process_memory_checkpoint"],
} as const;

/**
 * Creates the `cloudflare-bridge` managed-runtime driver: an operator-deployed Cloudflare Sandbox
 * Bridge reached over HTTP (`driver_service` placement), `ama_worker` lane only, `checkpoint_restore`
 * workspaces in a blob store, `final_collect` outputs when an output store is set, `file_sync` memory
 * stores at `/mnt/memory/<storeName>/`, and no credential egress.
 */
export function createCloudflareBridgeManagedRuntime(
  options: CloudflareBridgeManagedRuntimeOptions,
): ManagedRuntimeProviderDriverPort {
  const resolved = resolveBridgeOptions(options);
  const { provider } = createBridgeSandboxComponents(resolved);
  return createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: CLOUDFLARE_BRIDGE_DRIVER_VERSION,
    placements: ["driver_service"],
    composition: {
      providerName: CLOUDFLARE_BRIDGE_PROVIDER,
      provider,
      context: (scope) => ({ sessionId: scope.sessionId, workdir: "/workspace" }),
      leaseTtlMs: resolved.leaseTtlMs,
      sandboxCapabilities: {
        suspendResume: "unsupported",
        hardTerminate: "supported",
        runtimeCheckpoints: [],
      },
      workspace: { strategies: ["checkpoint_restore"] },
      ...(resolved.outputStore
        ? {
            outputs: {
              store: resolved.outputStore,
              keyPrefix: resolved.outputKeyPrefix,
              durability: "durable",
            },
          }
        : {}),
      ...(resolved.readiness ? { readiness: resolved.readiness } : {}),
      ...(options.environmentPackages === undefined
        ? {}
        : { environmentPackages: options.environmentPackages }),
      drivers: ["ama_worker"],
      // The bridge cannot mount a bucket; memory stores are copied in and written back over exec and the file routes.
      memoryStores: "file_sync",
    },
  });
}

/**
 * Builds the bridge client, checkpointer and sandbox provider from resolved options. `wrapClient` lets a
 * caller observe the client (the benchmark times every bridge call) without changing the wiring.
 */
export function createBridgeSandboxComponents(
  resolved: ResolvedCloudflareBridgeOptions,
  options: {
    readonly wrapClient?: (client: BridgeClient) => BridgeClient;
  } = {},
) {
  const baseClient = createBridgeClient({
    baseUrl: resolved.baseUrl,
    apiKey: resolved.apiKey,
    fetch: resolved.fetch,
    retry: resolved.retry,
  });
  const observed = options.wrapClient ? options.wrapClient(baseClient) : baseClient;
  const client = createTombstoningClient(
    resolved.checkContainerRuntime
      ? createRuntimeCheckingClient(observed, resolved.checkContainerRuntime)
      : observed,
  );
  const checkpointer = createBridgeCheckpointer({
    provider: CLOUDFLARE_BRIDGE_PROVIDER,
    client,
    store: resolved.checkpointStore,
    keyPrefix: resolved.checkpointKeyPrefix,
    excludes: resolved.checkpointExcludes,
    maxRequestBytes: resolved.maxHydrateBytes,
    partBytes: resolved.partBytes,
    archiveLimits: resolved.archiveLimits,
    compression: resolved.compression,
    ...(resolved.spoolDirectory === undefined ? {} : { spoolDirectory: resolved.spoolDirectory }),
    ...(resolved.onProgress === undefined ? {} : { onProgress: resolved.onProgress }),
  });
  const provider = createBridgeSandboxProvider({
    provider: CLOUDFLARE_BRIDGE_PROVIDER,
    client,
    checkpointer,
    maxRequestBytes: resolved.maxHydrateBytes,
    maxExecOutputBytes: resolved.maxExecOutputBytes,
  });
  return { client, checkpointer, provider };
}
