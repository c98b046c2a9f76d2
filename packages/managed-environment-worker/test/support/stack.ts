import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import {
  type ControlPlaneObserver,
  type LocalControlPlane,
  startLocalControlPlane,
} from "@open-managed-agents/local-control-plane";
import {
  REFERENCE_PROVIDER,
  createReferenceManagedRuntimeDriver,
} from "@open-managed-agents/managed-runtime-conformance/testing";
import {
  type ManagedRuntimeHostOptions,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
} from "@open-managed-agents/managed-runtime-host";
import {
  type LogEntry,
  createMemoryFencePort,
  createMemoryOrphanPort,
  createRecordingLogger,
} from "@open-managed-agents/managed-runtime-host/testing";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceFencePort,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ManagedEnvironmentWorker,
  type ManagedEnvironmentWorkerOptions,
  type ManagedRuntimeHostFactory,
  type WorkItemReport,
  createManagedEnvironmentWorkerInstallation,
} from "../../src/index.js";

/**
 * The pieces a user runs, all real: the local control plane (stand-in for Anthropic Managed Agents), the
 * official SDK client, this worker, the fenced host over the conformance reference driver (real `sh`
 * and `node` subprocesses that see `/workspace`), and the `oma-ama-worker` bin inside that sandbox.
 */
export interface Stack {
  readonly plane: LocalControlPlane;
  readonly client: Anthropic;
  readonly environment: { readonly id: string; readonly environmentKey: string };
  readonly fences: ReturnType<typeof createMemoryFencePort>;
  readonly orphans: ReturnType<typeof createMemoryOrphanPort>;
  readonly driver: ReturnType<typeof createReferenceManagedRuntimeDriver>;
  readonly reports: WorkItemReport[];
  readonly logs: readonly LogEntry[];
  readonly rootDir: string;
  /** The directory holding the `oma-ama-worker` this run installed (on the runtime's PATH). */
  readonly binDirectory: string;
  worker(
    overrides?: Partial<ManagedEnvironmentWorkerOptions>,
    hostFences?: RuntimeResourceFencePort,
  ): Promise<ManagedEnvironmentWorker>;
  /**
   * A per-item host factory over the reference driver, like the installation's, with `wrap` to replace or
   * observe ports (its second argument counts items from 1).
   */
  hostFactory(wrap?: (ports: HostPorts, item: number) => HostPorts): ManagedRuntimeHostFactory;
  /** Resolves once `count` reports arrived. */
  reportsAfter(count: number): Promise<WorkItemReport[]>;
  close(): Promise<void>;
}

/** An `ama_worker` profile naming the bin, whose env reaches Node and the bin. */
export function amaWorkerProfile(binDirectory: string): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: {
        command: "oma-ama-worker",
        env: {
          PATH: `${binDirectory}${delimiter}/usr/local/bin:/usr/bin:/bin`,
          OMA_AMA_MAX_IDLE_MS: "400",
        },
      },
    },
  };
}

/** The ports a host is built from. */
export type HostPorts = Omit<
  ManagedRuntimeHostOptions,
  "ownerId" | "leaseTtlMs" | "heartbeatIntervalMs"
>;

export async function startStack(
  options: {
    webhook?: { url: string; secret: string };
    defaultTtlSeconds?: number;
    clock?: () => number;
    onEvent?: ControlPlaneObserver;
  } = {},
): Promise<Stack> {
  const rootDir = await mkdtemp(join(tmpdir(), "oma-env-worker-"));
  // A directory the confined local runtime sees (the host's /opt, copy-on-write), not the host's /tmp.
  const binDirectory = dirname(await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR));
  // The readiness probe runs with the runtime's own PATH, as a sandbox image's would carry the bin.
  process.env.PATH = `${binDirectory}${delimiter}${process.env.PATH ?? ""}`;
  const plane = await startLocalControlPlane({
    ...(options.defaultTtlSeconds ? { defaultTtlSeconds: options.defaultTtlSeconds } : {}),
    ...(options.webhook ? { webhook: options.webhook } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  const environment = plane.createEnvironment({ name: "env-worker-test" });
  const client = new Anthropic({
    baseURL: plane.url,
    apiKey: null,
    authToken: null,
    maxRetries: 0,
  });
  const fences = createMemoryFencePort();
  const orphans = createMemoryOrphanPort();
  const driver = createReferenceManagedRuntimeDriver({
    rootDir: join(rootDir, "runtimes"),
    supervised: true,
  });
  const reports: WorkItemReport[] = [];
  const waiters: (() => void)[] = [];
  const logger = createRecordingLogger();
  return {
    plane,
    client,
    environment,
    fences,
    orphans,
    driver,
    reports,
    logs: logger.entries,
    rootDir,
    binDirectory,
    async worker(overrides = {}, hostFences = fences) {
      const installation = await createManagedEnvironmentWorkerInstallation({
        mode: "runtime_host",
        worker: {
          client,
          environmentId: environment.id,
          environmentKey: environment.environmentKey,
          workspaceId: "ws_test",
          profileFor: () => amaWorkerProfile(binDirectory),
          conflictRetry: { attempts: 40, baseDelayMs: 100, maxDelayMs: 1_000 },
          shutdownGraceMs: 20_000,
          logger,
          onRunResult: (report) => {
            reports.push(report);
            for (const wake of waiters.splice(0)) wake();
          },
          ...overrides,
        },
        provider: {
          driver,
          provider: REFERENCE_PROVIDER,
          placement: "in_process",
          host: {
            ownerId: "env-worker-test",
            leaseTtlMs: 60_000,
            heartbeatIntervalMs: 5_000,
            fences: hostFences,
            orphans,
            logger,
          },
        },
      });
      if (installation.mode !== "runtime_host")
        throw new Error("expected a runtime_host installation");
      return installation.worker;
    },
    hostFactory(wrap = (ports) => ports) {
      const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
      let item = 0;
      return async ({ scope, profile }) => {
        item += 1;
        const { resources } = await registry.prepare({
          provider: REFERENCE_PROVIDER,
          placement: "in_process",
          scope,
          profile,
          providerConfig: {},
        });
        // The supervisor transport is already inside the wrapped harness driver.
        const { supervisorTransport: _transport, ...ports } = resources;
        return createManagedRuntimeHost({
          ownerId: "env-worker-test",
          leaseTtlMs: 60_000,
          heartbeatIntervalMs: 5_000,
          ...wrap({ fences, orphans, logger, ...ports }, item),
        });
      };
    },
    async reportsAfter(count) {
      while (reports.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return reports.slice(0, count);
    },
    async close() {
      await plane.stop();
      await rm(rootDir, { recursive: true, force: true });
    },
  };
}
