import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createBlobStoreFromUrl } from "@open-managed-agents/blob-store/url";
import type { ManagedRuntimeHostFactory } from "@open-managed-agents/managed-environment-worker";
import {
  type HostLogger,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  loadManagedRuntimeProviderDriver,
} from "@open-managed-agents/managed-runtime-host";
import {
  DriverLoadFailedError,
  ManagedRuntimeError,
  type ManagedRuntimeProviderDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import type { ServiceConfig } from "../config/schema.js";
import { countingBlobStore } from "../metrics/counting-blob-store.js";
import { instrumentPort } from "../metrics/instrument-ports.js";
import type { ServiceMetrics } from "../metrics/metrics.js";
import { type TransferProgress, createTransferProgress } from "../metrics/transfer-progress.js";
import { type RuntimeStore, openRuntimeStore } from "../stores/runtime-store.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A sweep of one session's unreferenced checkpoint objects, when the driver module exports one. */
export type CheckpointSweep = (input: {
  readonly sessionId: string;
  readonly published: readonly unknown[];
  readonly graceMs: number;
}) => Promise<{ kept: number; deleted: number }>;

/** Everything one deployment is built from. */
export interface Composition {
  readonly store: RuntimeStore;
  readonly checkpointStore: BlobStore | null;
  readonly driver: ManagedRuntimeProviderDriverPort;
  readonly progress: TransferProgress;
  readonly sweep: CheckpointSweep | null;
  /** The per-item host factory the environment worker calls. */
  readonly hostFactory: ManagedRuntimeHostFactory;
  /** Driver ports of one scope (for the reconciler's `reap` and `--check`'s probe). */
  prepare(
    scope: Parameters<ManagedRuntimeHostFactory>[0]["scope"],
    profile: Parameters<ManagedRuntimeHostFactory>[0]["profile"],
  ): ReturnType<ReturnType<typeof createManagedRuntimeProviderRegistry>["prepare"]>;
  close(): Promise<void>;
}

const PROGRESS_STEP_BYTES = 16 * 1024 * 1024;

/**
 * Opens the store and blob stores of the config and loads the driver through the host's loader. The
 * driver's factory options are `driverOptions` plus, for drivers that take them, `env` (the process
 * environment, the bridge driver's env form), `checkpointStore`/`outputStore` (when configured) and
 * `onProgress` (checkpoint and restore progress, logged and counted by this service).
 */
export async function composeDeployment(
  config: ServiceConfig,
  context: { env: Env; logger: HostLogger; metrics: ServiceMetrics },
): Promise<Composition> {
  const store = await openRuntimeStore(config.store);
  try {
    const progress = createTransferProgress(context.logger, { stepBytes: PROGRESS_STEP_BYTES });
    // Counted, so checkpoint and restore progress is seen on every path the driver takes.
    const checkpointStore = config.checkpointStore
      ? countingBlobStore(
          await createBlobStoreFromUrl(config.checkpointStore, { env: context.env }),
          (phase, bytes) => progress.storeObject(phase, bytes),
        )
      : null;
    const outputStore = config.outputStore
      ? await createBlobStoreFromUrl(config.outputStore, { env: context.env })
      : checkpointStore;
    let driverModule: Record<string, unknown> = {};
    const driver = await loadManagedRuntimeProviderDriver({
      provider: config.provider,
      moduleSpecifier: config.driver,
      importModule: async (specifier) => {
        driverModule = (await import(
          isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier
        )) as Record<string, unknown>;
        return driverModule;
      },
      factoryOptions: {
        env: context.env,
        ...(checkpointStore ? { checkpointStore } : {}),
        ...(outputStore ? { outputStore } : {}),
        onProgress: (report: Parameters<TransferProgress["report"]>[0]) => progress.report(report),
        ...config.driverOptions,
      },
    }).catch((error: unknown) => {
      if (ManagedRuntimeError.isInstance(error)) throw error;
      throw new DriverLoadFailedError({
        message: `driver ${config.driver} did not load: ${
          error instanceof Error ? error.message : String(error)
        }`,
        context: { key: "driver" },
      });
    });
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    const sweep = sweepOf(
      driverModule,
      checkpointStore,
      checkpointKeyPrefixOf(config.driverOptions, context.env),
    );
    const instrument = <T extends object>(port: string, target: T) =>
      instrumentPort(port, target, {
        metrics: context.metrics,
        logger: context.logger,
        progress,
        progressIntervalMs: 5_000,
      });
    const prepare: Composition["prepare"] = (scope, profile) =>
      registry.prepare({
        provider: config.provider,
        placement: config.placement,
        scope,
        profile,
        providerConfig: {},
      });
    const hostFactory: ManagedRuntimeHostFactory = async ({ scope, profile }) => {
      const { resources } = await prepare(scope, profile);
      // The supervisor transport is already inside the wrapped harness driver; the host takes ports only.
      const { supervisorTransport: _transport, ...ports } = resources;
      const wrapped = Object.fromEntries(
        Object.entries(ports).map(([name, port]) => [
          name,
          port && typeof port === "object" ? instrument(name, port as object) : port,
        ]),
      ) as typeof ports;
      return createManagedRuntimeHost({
        ownerId: config.ownerId,
        leaseTtlMs: config.leaseTtlMs,
        heartbeatIntervalMs: config.fenceHeartbeatMs,
        fences: instrument("fence", store.fences),
        orphans: instrument("orphans", store.orphans),
        journal: instrument("journal", store.journal),
        logger: context.logger,
        ...wrapped,
      });
    };
    return {
      store,
      checkpointStore,
      driver,
      progress,
      sweep,
      hostFactory,
      prepare,
      close: () => store.close(),
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * The checkpoint key prefix the bridge driver writes under: its option, else the env form's namespace
 * (`OMA_CLOUDFLARE_BRIDGE_RUNTIME_ID`), else its default.
 */
function checkpointKeyPrefixOf(
  driverOptions: Readonly<Record<string, unknown>>,
  env: Env,
): string | undefined {
  if (typeof driverOptions.checkpointKeyPrefix === "string")
    return driverOptions.checkpointKeyPrefix;
  const runtimeId = env.OMA_CLOUDFLARE_BRIDGE_RUNTIME_ID;
  return runtimeId ? `cloudflare-bridge-workspaces/${runtimeId}` : undefined;
}

function sweepOf(
  module: Record<string, unknown>,
  checkpointStore: BlobStore | null,
  prefix: string | undefined,
): CheckpointSweep | null {
  const sweep = module.sweepBridgeCheckpointBlobs;
  if (typeof sweep !== "function" || !checkpointStore) return null;
  return (input) =>
    (sweep as (options: Record<string, unknown>) => Promise<{ kept: number; deleted: number }>)({
      checkpointStore,
      ...(prefix ? { checkpointKeyPrefix: prefix } : {}),
      sessionId: input.sessionId,
      published: input.published,
      graceMs: input.graceMs,
    });
}
