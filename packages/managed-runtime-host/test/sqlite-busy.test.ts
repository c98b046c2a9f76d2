/**
 * A SQLite file another connection holds locked (real SQLite, two connections): the host's fence port is
 * refused as `unavailable` (busy) instead of `internal`, and the run's publish is tried again within the
 * lease, so the finished work is published once the lock is released, or the run fails naming the busy store.
 */
import Database from "better-sqlite3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeResourceFencePort } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, describe, expect, it } from "vitest";
import { createManagedRuntimeHost } from "../src/host/create-host.js";
import { applyMigrations } from "../src/sql/apply-migrations.js";
import { createBetterSqliteClient } from "../src/sql/better-sqlite-client.js";
import { createSqlFencePort } from "../src/sql/sql-fence-port.js";
import { createFakeHostDependencies } from "../src/testing/fake-runtime.js";
import { createRecordingLogger } from "../src/testing/recording-logger.js";
import { systemClock, systemScheduler } from "../src/time.js";
import { amaProfile, scope } from "./support/fixture.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/**
 * A host whose fences live in a SQLite file (busy timeout 100 ms) that a second connection locks, with
 * `BEGIN EXCLUSIVE`, right before the run's first publish, and releases `holdMs` later.
 */
async function lockedAtPublish(holdMs: number, leaseTtlMs: number) {
  const dir = await mkdtemp(join(tmpdir(), "oma-sqlite-busy-"));
  dirs.push(dir);
  const file = join(dir, "runtime.sqlite");
  const database = new Database(file);
  database.pragma("busy_timeout = 100");
  const client = createBetterSqliteClient(database);
  await applyMigrations(client);
  const other = new Database(file);
  const sql = createSqlFencePort({ client });
  let locked = false;
  const fences: RuntimeResourceFencePort = {
    ...sql,
    publish(input) {
      if (!locked) {
        locked = true;
        other.exec("BEGIN EXCLUSIVE");
        setTimeout(() => other.exec("COMMIT"), holdMs);
      }
      return sql.publish(input);
    },
  };
  const logger = createRecordingLogger();
  const deps = createFakeHostDependencies({
    clock: systemClock,
    harness: { scheduler: systemScheduler },
    fences,
  });
  const host = createManagedRuntimeHost({
    ownerId: "owner-busy",
    leaseTtlMs,
    heartbeatIntervalMs: Math.floor(leaseTtlMs / 3),
    ...deps.ports,
    logger,
  });
  return { host, logger, close: () => (database.close(), other.close()) };
}

describe("a SQLite store locked by another connection", () => {
  it("publishes the finished work once the lock is released, within the lease", async () => {
    const world = await lockedAtPublish(1_500, 30_000);
    try {
      const result = await world.host.run({ scope, profile: amaProfile });
      expect(result).toMatchObject({ type: "completed", revision: 1 });
      const retries = world.logger.entries.filter((entry) => entry.event === "store.busy_retry");
      expect(retries.length).toBeGreaterThan(0);
    } finally {
      world.close();
    }
  }, 60_000);

  it("ends the run naming the busy store when the lock outlasts the lease", async () => {
    const world = await lockedAtPublish(8_000, 3_000);
    try {
      const result = await world.host.run({ scope, profile: amaProfile });
      // Two calls wait on the lock until the fence runs out: the publish (the run fails as `unavailable`)
      // and the fence renewal (the lease is lost, with the busy store as its cause). Which one gives up
      // first depends on the machine's load; either way the message names the locked store, never
      // `internal`.
      const BUSY =
        /the SQL store is busy: another connection holds its lock past the busy timeout \(SQLITE_BUSY/;
      if (result.type === "failed") {
        expect(result.error.code).toBe("unavailable");
        expect(result.error.message).toMatch(/^fence-publish failed: /);
        expect(result.error.message).toMatch(BUSY);
      } else {
        expect(result.type).toBe("lease_lost");
        const error = result.type === "lease_lost" ? result.error : null;
        expect(error?.code).toBe("lease_lost");
        expect(error?.message).toMatch(/^lease lost \(fence_renew_failed\) during fence-renew: /);
        expect(error?.message).toMatch(BUSY);
      }
    } finally {
      await new Promise((resolve) => setTimeout(resolve, 8_500));
      world.close();
    }
  }, 60_000);
});
