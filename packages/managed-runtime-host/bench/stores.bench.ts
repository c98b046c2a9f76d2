/**
 * Fence store benchmark, run by `pnpm bench` (root: `pnpm bench:host`) after the host benchmark. Prints figures;
 * asserts nothing. The latency of each fence operation of a work item (acquire, publish, release) on SQLite (a
 * file in WAL mode through better-sqlite3) and on Postgres (a server started for the run on 127.0.0.1, over TCP),
 * both with their default durability, in the same run. Then the same operations from 8 concurrent hosts, each
 * with its own connection, on sessions of their own: what a fleet sharing one database sees. (better-sqlite3 is
 * synchronous, so in one process SQLite's 8 connections take turns; separate processes would wait on its lock.)
 */
import Database from "better-sqlite3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeResourceFencePort } from "@open-managed-agents/runtime-resource-contract";
import { applyMigrations } from "../src/sql/apply-migrations.js";
import { createBetterSqliteClient } from "../src/sql/better-sqlite-client.js";
import { createPostgresSqlClient } from "../src/sql/postgres-client.js";
import type { SqlClient } from "../src/sql/sql-client.js";
import { createSqlFencePort } from "../src/sql/sql-fence-port.js";
import { startPostgresCluster } from "../test/support/postgres-cluster.js";

const ITEMS = 2_000;
const WARMUP = 200;
const SESSIONS = 100;
const HOSTS = 8;
const CONCURRENT_ITEMS = 250;
const workspaceCandidate = { id: "wcp-1", contentHash: "sha256:aa" };

interface Samples {
  readonly acquire: number[];
  readonly publish: number[];
  readonly release: number[];
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function timed<T>(samples: number[], body: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await body();
  samples.push(performance.now() - start);
  return result;
}

/** One work item's fence calls on `sessionId`, each timed into `samples`. */
async function workItem(
  fences: RuntimeResourceFencePort,
  sessionId: string,
  workId: string,
  samples: Samples,
): Promise<void> {
  const scope = { workspaceId: "ws-bench", environmentId: "env-bench", sessionId, workId };
  const result = await timed(samples.acquire, () =>
    fences.acquire({ scope, ownerId: "bench", ttlMs: 60_000 }),
  );
  if (result.type !== "acquired") throw new Error(`acquire answered ${result.type}`);
  const published = await timed(samples.publish, () =>
    fences.publish({ fence: result.fence, workspaceCandidate, outputCandidate: null }),
  );
  if (published.type !== "published") throw new Error("publish lost");
  await timed(samples.release, () => fences.release({ fence: result.fence, reason: "completed" }));
}

const empty = (): Samples => ({ acquire: [], publish: [], release: [] });

async function sequential(name: string, client: SqlClient): Promise<void> {
  const fences = createSqlFencePort({ client });
  const run = `${Date.now()}`;
  for (let index = 0; index < WARMUP; index += 1)
    await workItem(fences, `warm-${run}-${index % SESSIONS}`, `w-${index}`, empty());
  const samples = empty();
  const start = performance.now();
  for (let index = 0; index < ITEMS; index += 1)
    await workItem(fences, `seq-${run}-${index % SESSIONS}`, `w-${index}`, samples);
  print(name, samples, (ITEMS / (performance.now() - start)) * 1000);
}

async function concurrent(name: string, clients: readonly SqlClient[]): Promise<void> {
  const run = `${Date.now()}`;
  const samples = empty();
  const start = performance.now();
  await Promise.all(
    clients.map(async (client, host) => {
      const fences = createSqlFencePort({ client });
      for (let index = 0; index < CONCURRENT_ITEMS; index += 1)
        await workItem(fences, `con-${run}-${host}-${index % 10}`, `w-${index}`, samples);
    }),
  );
  print(name, samples, ((clients.length * CONCURRENT_ITEMS) / (performance.now() - start)) * 1000);
}

/** Baseline: a `SELECT 1` round trip on the same connection, which every operation above pays once. */
async function roundTrip(name: string, client: SqlClient): Promise<void> {
  const samples: number[] = [];
  for (let index = 0; index < WARMUP; index += 1) await client.all("SELECT 1 AS one", []);
  for (let index = 0; index < ITEMS; index += 1)
    await timed(samples, () => client.all("SELECT 1 AS one", []));
  samples.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(34)} SELECT 1 p50 ${percentile(samples, 0.5).toFixed(3).padStart(7)}  p99 ${percentile(samples, 0.99).toFixed(3).padStart(7)}  (baseline)`,
  );
}

function print(name: string, samples: Samples, itemsPerSecond: number): void {
  const cell = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `p50 ${percentile(sorted, 0.5).toFixed(3).padStart(7)}  p99 ${percentile(sorted, 0.99).toFixed(3).padStart(7)}`;
  };
  console.log(
    `${name.padEnd(34)} acquire ${cell(samples.acquire)}   publish ${cell(samples.publish)}   release ${cell(samples.release)}   ${itemsPerSecond.toFixed(0).padStart(5)} items/s`,
  );
}

const folder = await mkdtemp(join(tmpdir(), "oma-stores-bench-"));
const cluster = await startPostgresCluster({ durable: true });
const opened: { close(): unknown }[] = [];
try {
  const sqlite = (file: string) => {
    const database = new Database(join(folder, file));
    database.pragma("journal_mode = WAL");
    database.pragma("busy_timeout = 10000");
    opened.push(database);
    return createBetterSqliteClient(database);
  };
  const postgres = (connectionString = cluster.url) => {
    const client = createPostgresSqlClient({ connectionString, maxConnections: 1 });
    opened.push(client);
    return client;
  };
  const sqliteMain = sqlite("fences.sqlite");
  const postgresMain = postgres();
  await applyMigrations(sqliteMain);
  await applyMigrations(postgresMain);

  console.log(
    `Fence operations per work item, ms (${ITEMS} sequential items over ${SESSIONS} sessions, one connection)`,
  );
  await sequential("SQLite file, WAL", sqliteMain);
  await sequential("Postgres 127.0.0.1, TCP", postgresMain);
  // better-sqlite3 builds SQLite with WAL commits synced at checkpoints, not at each commit (a power loss may
  // drop the latest commits); synchronous_commit=off is Postgres' setting of the same kind.
  const asynchronous = new URL(cluster.url);
  asynchronous.searchParams.set("options", "-c synchronous_commit=off");
  await sequential("Postgres, synchronous_commit off", postgres(asynchronous.toString()));
  await roundTrip("SQLite file, WAL", sqliteMain);
  await roundTrip("Postgres 127.0.0.1, TCP", postgresMain);

  console.log(
    `\n${HOSTS} hosts at once, each its own connection and sessions (${CONCURRENT_ITEMS} items each), ms`,
  );
  console.log(
    "(SQLite's connections take turns within this one process: better-sqlite3 is synchronous)",
  );
  await concurrent(
    "SQLite file, WAL",
    Array.from({ length: HOSTS }, () => sqlite("fences.sqlite")),
  );
  await concurrent("Postgres 127.0.0.1, TCP", Array.from({ length: HOSTS }, postgres));
} finally {
  await Promise.all(opened.map((handle) => handle.close()));
  await cluster.remove();
  await rm(folder, { recursive: true, force: true });
}
