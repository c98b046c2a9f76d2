/**
 * `pnpm bench:load`: N concurrent sessions through one local stack (Cloudflare's bridge Worker in local
 * workerd over the local container server). For each N, a fresh driver process runs N sessions (checkpoint,
 * then restore and verify); this process samples the containers alive, then runs the reconciler and counts
 * the containers left (must be 0). Peak RSS is the driver process's own, against an idle driver process.
 *
 * Env: OMA_LOAD_LEVELS (default "1,5,20,5": the last level shows the stack still serves after the burst), OMA_LOAD_MIB per session (default 2), OMA_LOAD_MAX_CONTAINERS
 * (default 16), OMA_LOAD_WARM_POOL (bridge warm pool target, default 0; its containers are not counted as left),
 * OMA_LOAD_VERBOSE=1 (pass workerd's output through).
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { startLocalBridge } from "@open-managed-agents/local-container";
import {
  applyMigrations,
  createBetterSqliteClient,
  createManagedRuntimeOrphanReconciler,
  createManagedRuntimeProviderRegistry,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import { createCloudflareBridgeManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { LOAD_RESULT_PREFIX } from "./load-protocol.js";

const MIB = 1024 * 1024;
const levels = (process.env.OMA_LOAD_LEVELS ?? "1,5,20,5").split(",").map(Number);
const workspaceMiB = Number(process.env.OMA_LOAD_MIB ?? "2");
const maxContainers = Number(process.env.OMA_LOAD_MAX_CONTAINERS ?? "16");
const warmPoolTarget = Number(process.env.OMA_LOAD_WARM_POOL ?? "0");

interface ChildFigures {
  readonly sessions: number;
  readonly wallMs: number;
  readonly completions: number;
  readonly failures: Record<string, number>;
  /** The first message of each failure code. */
  readonly samples: Record<string, string>;
  readonly peakRssBytes: number;
}

function runChild(config: Record<string, unknown>, apiKey: string): Promise<ChildFigures> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL("./load-child.js", import.meta.url)), JSON.stringify(config)],
    {
      env: { ...process.env, BRIDGE_API_KEY: apiKey },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      const line = output.split("\n").find((entry) => entry.startsWith(LOAD_RESULT_PREFIX));
      if (code !== 0 || !line)
        return reject(new Error(`load child exited ${code} without a result`));
      resolve(JSON.parse(line.slice(LOAD_RESULT_PREFIX.length)) as ChildFigures);
    });
  });
}

async function main(): Promise<void> {
  const bridge = await startLocalBridge({
    limits: { maxContainers },
    warmPoolTarget,
    verbose: process.env.OMA_LOAD_VERBOSE === "1",
  });
  const dir = await mkdtemp(join(tmpdir(), "oma-bench-load-"));
  try {
    const database = join(dir, "runtime.sqlite");
    const storeDir = join(dir, "store");
    const client = createBetterSqliteClient(new Database(database));
    await applyMigrations(client);
    const baseline = await runChild(
      { sessions: 0, workspaceMiB, bridgeUrl: bridge.url, database, storeDir },
      bridge.apiKey,
    );
    const rows: string[] = [];
    for (const sessions of levels) {
      let maxAlive = 0;
      const sampler = setInterval(
        () => (maxAlive = Math.max(maxAlive, bridge.containerServer.containers.list().length)),
        25,
      );
      const figures = await runChild(
        { sessions, workspaceMiB, bridgeUrl: bridge.url, database, storeDir },
        bridge.apiKey,
      );
      clearInterval(sampler);
      const store = createFsBlobStore({ rootDir: storeDir });
      const driver = createCloudflareBridgeManagedRuntime({
        baseUrl: bridge.url,
        apiKey: bridge.apiKey,
        checkpointStore: store,
        outputStore: store,
      });
      const { resources } = await createManagedRuntimeProviderRegistry({
        drivers: [driver],
      }).prepare({
        provider: "cloudflare-bridge",
        placement: "driver_service",
        scope: {
          workspaceId: "ws-load",
          environmentId: "env-load",
          sessionId: "reconciler",
          workId: "reconciler",
        },
        profile: {
          workspace: { requirement: "durable" },
          outputs: { requirement: "durable" },
          runtimeCheckpoint: "disabled",
          driver: { type: "ama_worker", process: { command: "true" } },
        },
        providerConfig: {},
      });
      const reconciler = createManagedRuntimeOrphanReconciler({
        orphans: createSqlOrphanPort({ client }),
        journal: createSqlSandboxJournal({ client }),
        fences: createSqlFencePort({ client }),
        sandbox: resources.sandbox,
        backoff: { baseMs: 0, maxMs: 0, jitter: 0 },
      });
      const reconciled = await reconciler.runOnce({ limit: 1000 });
      const stats = (await (
        await fetch(`${bridge.url}/v1/pool/stats`, {
          headers: { authorization: `Bearer ${bridge.apiKey}` },
        })
      ).json()) as { warm: number };
      const left = bridge.containerServer.containers.list().length - stats.warm;
      const failures =
        Object.entries(figures.failures)
          .map(([code, count]) => `${code}×${count}`)
          .join(" ") || "none";
      rows.push(
        [
          String(sessions).padStart(4),
          `${(figures.wallMs / 1000).toFixed(1)} s`.padStart(9),
          `${figures.completions}/${sessions}`.padStart(7),
          failures.padEnd(34),
          String(maxAlive).padStart(5),
          String(left).padStart(5),
          `${(figures.peakRssBytes / MIB).toFixed(0)} MiB`.padStart(9),
          `${(figures.peakRssBytes / baseline.peakRssBytes).toFixed(2)}×`.padStart(7),
          `journal reaped ${reconciled.journal?.reaped ?? 0}, orphans reaped ${reconciled.reaped}`,
        ].join("  "),
        ...Object.entries(figures.samples).map(([code, message]) => `        ${code}: ${message}`),
      );
    }
    process.stdout.write(
      [
        `bench:load — ${workspaceMiB} MiB per session, container limit ${maxContainers}, warm pool ${warmPoolTarget}, idle driver peak RSS ${(baseline.peakRssBytes / MIB).toFixed(0)} MiB`,
        `     N       wall   done  failures by code                      max  left   peak RSS  vs idle  reconciler`,
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    await bridge.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
