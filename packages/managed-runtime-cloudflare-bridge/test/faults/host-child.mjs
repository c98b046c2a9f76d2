// A host in its own process, so a test can SIGKILL it mid-run. It runs one work item against the local
// stack with the SQLite stores at `config.database`, prints `fault-point <stage>` when the bridge request
// of that stage is about to go out, and then holds that request until it is killed.
import Database from "better-sqlite3";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import {
  createBetterSqliteClient,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import { createCloudflareBridgeManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare-bridge";

const config = JSON.parse(process.argv[2]);
const database = new Database(config.database);
database.pragma("journal_mode = WAL");
database.pragma("busy_timeout = 5000");
const client = createBetterSqliteClient(database);
const store = createFsBlobStore({ rootDir: config.storeDir });
const holdAt = (_url, init) =>
  // The first request of the checkpoint's content transfer (the exec of `capture.sh bundle`).
  (config.stage === "checkpoint" &&
    typeof init?.body === "string" &&
    init.body.includes('"capture.sh","bundle"')) ||
  (config.stage === "harness" &&
    typeof init?.body === "string" &&
    init.body.includes("FAULT_HARNESS")) ||
  // The first request of a restore that reaches the sandbox (the exec of `restore.sh prepare`).
  (config.stage === "restore" &&
    typeof init?.body === "string" &&
    init.body.includes('"restore.sh","prepare"'));
const driver = createCloudflareBridgeManagedRuntime({
  baseUrl: config.bridgeUrl,
  apiKey: process.env.BRIDGE_API_KEY,
  checkpointStore: store,
  outputStore: store,
  spoolDirectory: config.spoolDir,
  async fetch(input, init) {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (holdAt(url, init)) {
      process.stdout.write(`fault-point ${config.stage}\n`);
      await new Promise(() => undefined);
    }
    return fetch(input, init);
  },
});
const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
const prepared = await registry.prepare({
  provider: "cloudflare-bridge",
  placement: "driver_service",
  scope: config.scope,
  profile: config.profile,
  providerConfig: {},
});
const host = createManagedRuntimeHost({
  ownerId: `child-${process.pid}`,
  leaseTtlMs: config.leaseTtlMs,
  heartbeatIntervalMs: Math.floor(config.leaseTtlMs / 4),
  fences: createSqlFencePort({ client }),
  orphans: createSqlOrphanPort({ client }),
  journal: createSqlSandboxJournal({ client }),
  ...prepared.resources,
});
const result = await host.run({ scope: config.scope, profile: config.profile });
process.stdout.write(`result ${result.type}\n`);
