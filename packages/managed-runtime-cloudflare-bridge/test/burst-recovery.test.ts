/**
 * A burst of sessions over the container limit never disables the local stack: on `startLocalBridge()`
 * defaults (no warm pool) and with a warm pool, the sessions over the limit are refused with
 * `insufficient_capacity`, the stack keeps serving once containers end, and the runs themselves leave
 * nothing: no container but the pool's warm one, no journal row.
 */
import Database from "better-sqlite3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  type SqlClient,
  applyMigrations,
  createBetterSqliteClient,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCloudflareBridgeManagedRuntime } from "../src/index.js";
import { scopeFor, shellProfile } from "./support.js";

/** The shape of the reported burst (20 sessions over a limit of 16, then 5) at a size two cores carry. */
const LIMIT = 4;
const BURST = 6;
const AFTER = 2;

let dir: string;
let client: SqlClient;
let database: Database.Database;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "oma-bridge-burst-"));
  database = new Database(join(dir, "runtime.sqlite"));
  client = createBetterSqliteClient(database);
  await applyMigrations(client);
}, 120_000);

afterAll(async () => {
  database?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function resources(bridge: LocalBridge) {
  const store = createFsBlobStore({ rootDir: join(dir, "store") });
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    outputStore: store,
  });
  const prepared = await createManagedRuntimeProviderRegistry({ drivers: [driver] }).prepare({
    provider: "cloudflare-bridge",
    placement: "driver_service",
    scope: scopeFor("burst-setup"),
    profile: shellProfile("true"),
    providerConfig: {},
  });
  return prepared.resources;
}

async function runSessions(bridge: LocalBridge, count: number, label: string, holdSeconds: number) {
  const host = createManagedRuntimeHost({
    ownerId: `burst-${label}`,
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 20_000,
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    journal: createSqlSandboxJournal({ client }),
    ...(await resources(bridge)),
  });
  const profile = shellProfile(`sleep ${holdSeconds}; echo done > done.txt`);
  return Promise.all(
    Array.from({ length: count }, (_, index) =>
      host.run({ scope: scopeFor(`${label}-${index}`), profile }),
    ),
  );
}

describe.each([0, 1])(
  "a burst over the container limit on startLocalBridge() defaults, warm pool %i",
  (warmPoolTarget) => {
    let bridge: LocalBridge;
    beforeAll(async () => {
      bridge = await startLocalBridge({
        limits: { maxContainers: LIMIT },
        ...(warmPoolTarget > 0 ? { warmPoolTarget } : {}),
      });
    }, 120_000);
    afterAll(() => bridge?.stop());

    it("refuses the sessions over the limit, then serves new ones, leaving no container and no journal row", async () => {
      // Each session of the burst holds its container long enough for every other one to ask for its own.
      const burst = await runSessions(bridge, BURST, `burst-${warmPoolTarget}`, 10);
      const completed = burst.filter((result) => result.type === "completed");
      const refused = burst.flatMap((result) => (result.type === "failed" ? [result.error] : []));
      expect(completed.length + refused.length).toBe(BURST);
      // The limit was used in full (a warm container the pool started ahead holds a slot too); every other
      // session was refused as over capacity, naming the limit.
      expect(completed.length).toBeGreaterThanOrEqual(LIMIT - warmPoolTarget);
      expect(completed.length).toBeLessThanOrEqual(LIMIT);
      for (const error of refused) {
        expect(error.code).toBe("insufficient_capacity");
        expect(error.message).toMatch(new RegExp(`instance limit reached \\(\\d+/${LIMIT}\\)`));
      }

      const after = await runSessions(bridge, AFTER, `after-${warmPoolTarget}`, 0);
      expect(after.map((result) => result.type)).toEqual(
        Array.from({ length: AFTER }, () => "completed"),
      );

      // The refused sessions' journal rows were settled by their own runs, as were the completed ones'.
      expect(await createSqlSandboxJournal({ client }).list({ limit: 100 })).toEqual([]);
      // Only the pool's warm containers stay.
      const stats = (await (
        await fetch(`${bridge.url}/v1/pool/stats`, {
          headers: { authorization: `Bearer ${bridge.apiKey}` },
        })
      ).json()) as { warm: number };
      expect(stats.warm).toBeLessThanOrEqual(warmPoolTarget);
      expect(bridge.containerServer.containers.list()).toHaveLength(stats.warm);
    }, 300_000);
  },
);
