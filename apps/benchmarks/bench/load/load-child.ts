/**
 * The driver side of `bench:load`, in its own Node process so its peak RSS is the driver's (and host's)
 * alone: N concurrent sessions, each a work item that writes a workspace and checkpoints it, then one
 * that restores and verifies it. `idle` builds the same pieces and runs nothing (the baseline).
 * Prints one `OMA_LOAD_RESULT <json>` line.
 */
import Database from "better-sqlite3";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import {
  applyMigrations,
  createBetterSqliteClient,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { createCloudflareBridgeManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { ownPeakRssBytes } from "@open-managed-agents/runtime-utils/node";
import { LOAD_RESULT_PREFIX } from "./load-protocol.js";

interface LoadConfig {
  readonly sessions: number;
  readonly workspaceMiB: number;
  readonly bridgeUrl: string;
  readonly database: string;
  readonly storeDir: string;
}

const profile = (script: string): ManagedRuntimeProfile => ({
  workspace: { requirement: "durable" },
  outputs: { requirement: "durable" },
  runtimeCheckpoint: "disabled",
  driver: {
    type: "ama_worker",
    process: { command: "sh", args: ["-c", script], cwd: "/workspace" },
  },
});

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? "{}") as LoadConfig;
  const database = new Database(config.database);
  database.pragma("journal_mode = WAL");
  database.pragma("busy_timeout = 10000");
  const client = createBetterSqliteClient(database);
  await applyMigrations(client);
  const store = createFsBlobStore({ rootDir: config.storeDir });
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: config.bridgeUrl,
    apiKey: process.env.BRIDGE_API_KEY ?? "",
    checkpointStore: store,
    outputStore: store,
  });
  const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
  const stores = {
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    journal: createSqlSandboxJournal({ client }),
  };

  const runOne = async (scope: RuntimeResourceScope, script: string) => {
    const prepared = await registry.prepare({
      provider: "cloudflare-bridge",
      placement: "driver_service",
      scope,
      profile: profile(script),
      providerConfig: {},
    });
    const logger = {
      info: () => undefined,
      warn: (event: string, fields?: unknown) =>
        void (process.env.OMA_LOAD_DEBUG
          ? process.stderr.write(`${event} ${JSON.stringify(fields)}\n`)
          : undefined),
      error: (event: string, fields?: unknown) =>
        void (process.env.OMA_LOAD_DEBUG
          ? process.stderr.write(`${event} ${JSON.stringify(fields)}\n`)
          : undefined),
    };
    const host = createManagedRuntimeHost({
      logger,
      ownerId: `load-${process.pid}`,
      leaseTtlMs: 120_000,
      heartbeatIntervalMs: 30_000,
      ...stores,
      ...prepared.resources,
    });
    return host.run({ scope, profile: profile(script) });
  };

  const started = performance.now();
  const outcomes: string[] = [];
  const samples: Record<string, string> = {};
  const record = (result: Awaited<ReturnType<typeof runOne>>, step: string): string => {
    if (result.type === "completed" || result.type === "conflict") return result.type;
    samples[result.error.code] ??= `${step}: ${result.error.message}`.slice(0, 400);
    return result.error.code;
  };
  const write = `head -c ${config.workspaceMiB * 1024 * 1024} /dev/urandom > data.bin && sha256sum data.bin > data.sha`;
  await Promise.all(
    Array.from({ length: config.sessions }, async (_, index) => {
      const sessionId = `load-${process.pid}-${index}`;
      const scope = (step: string): RuntimeResourceScope => ({
        workspaceId: "ws-load",
        environmentId: "env-load",
        sessionId,
        workId: `${sessionId}-${step}`,
      });
      const first = await runOne(scope("checkpoint"), write);
      if (first.type !== "completed") return void outcomes.push(record(first, "checkpoint"));
      const second = await runOne(scope("restore"), "sha256sum -c data.sha");
      outcomes.push(record(second, "restore"));
    }),
  );
  const wallMs = performance.now() - started;
  const failures: Record<string, number> = {};
  for (const outcome of outcomes)
    if (outcome !== "completed") failures[outcome] = (failures[outcome] ?? 0) + 1;
  const result = {
    sessions: config.sessions,
    wallMs,
    completions: outcomes.filter((outcome) => outcome === "completed").length,
    failures,
    samples,
    peakRssBytes: ownPeakRssBytes(),
  };
  database.close();
  process.stdout.write(`${LOAD_RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

await main();
