import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  RuntimeResourceFence,
  RuntimeResourceFencePort,
} from "@open-managed-agents/runtime-resource-contract";
import { applyMigrations } from "../src/sql/apply-migrations.js";
import { POSTGRES_RUNTIME_RESOURCE_MIGRATIONS } from "../src/sql/migration-sources.js";
import { type PostgresSqlClient, createPostgresSqlClient } from "../src/sql/postgres-client.js";
import { createSqlFencePort } from "../src/sql/sql-fence-port.js";
import { systemClock } from "../src/time.js";
import { inSchema, postgresUrl } from "./support/postgres-schemas.js";

// Hosts on separate machines share nothing but the database: each acquirer here has a pool (connections) of its
// own, as a separate process would, so their statements interleave in the server, not in this process.
const HOSTS = 8;
const TTL = 120_000;
const workspaceCandidate = { id: "wcp-1", contentHash: "sha256:aa" };

describe("Postgres fence under concurrent hosts", () => {
  const schema = `fence_race_${crypto.randomUUID().replaceAll("-", "")}`;
  const clients: PostgresSqlClient[] = [];
  let hosts: RuntimeResourceFencePort[] = [];

  beforeAll(async () => {
    const admin = createPostgresSqlClient({ connectionString: postgresUrl(), maxConnections: 1 });
    await admin.run(`CREATE SCHEMA ${schema}`, []);
    await admin.close();
    for (let index = 0; index < HOSTS; index += 1) {
      clients.push(
        createPostgresSqlClient({
          connectionString: inSchema(postgresUrl(), schema),
          maxConnections: 2,
        }),
      );
    }
    // Every host migrates at start, all at once, as a fleet does: the advisory lock makes them take turns.
    expect(
      (await Promise.all(clients.map((client) => applyMigrations(client)))).flat().sort(),
    ).toEqual(POSTGRES_RUNTIME_RESOURCE_MIGRATIONS.map((migration) => migration.name));
    hosts = clients.map((client) => createSqlFencePort({ client, clock: systemClock }));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  it("lets exactly one host win each generation and publish it once, round after round", async () => {
    const session = `session-${crypto.randomUUID()}`;
    const scope = (index: number) => ({
      workspaceId: "ws-1",
      environmentId: "env-1",
      sessionId: session,
      workId: `work-${index}`,
    });
    let previous: RuntimeResourceFence | undefined;
    for (let round = 1; round <= 12; round += 1) {
      const results = await Promise.all(
        hosts.map((host, index) =>
          host.acquire({ scope: scope(index), ownerId: `owner-${index}`, ttlMs: TTL }),
        ),
      );
      const winners = results.flatMap((result) =>
        result.type === "acquired" ? [result.fence] : [],
      );
      expect(winners).toHaveLength(1);
      const fence = winners[0] as RuntimeResourceFence;
      expect(fence.generation).toBe(round);
      expect(results.filter((result) => result.type === "conflict")).toHaveLength(HOSTS - 1);

      // The winner's publish, duplicated through every host, plus the previous generation's stale publish.
      const publishes = await Promise.all(
        hosts.map((host) => host.publish({ fence, workspaceCandidate, outputCandidate: null })),
      );
      const stale = previous
        ? await hosts[0]?.publish({ fence: previous, workspaceCandidate, outputCandidate: null })
        : { type: "lost" };
      expect(publishes.filter((result) => result.type === "published")).toEqual([
        { type: "published", revision: round },
      ]);
      expect(stale).toEqual({ type: "lost" });
      await hosts[round % HOSTS]?.release({ fence, reason: "completed" });
      previous = fence;
    }
  }, 120_000);

  it("keeps generations unique and publishes once each while hosts acquire, publish and release freely", async () => {
    const session = `session-${crypto.randomUUID()}`;
    const acquired: number[] = [];
    const published: { generation: number; revision: number }[] = [];
    const worker = async (host: RuntimeResourceFencePort, index: number) => {
      // Each host works until it has held the fence three times; a conflict is simply tried again.
      let wins = 0;
      for (let attempt = 0; wins < 3 && attempt < 2_000; attempt += 1) {
        const scope = {
          workspaceId: "ws-1",
          environmentId: "env-1",
          sessionId: session,
          workId: `work-${index}-${attempt}`,
        };
        const result = await host.acquire({ scope, ownerId: `owner-${index}`, ttlMs: TTL });
        if (result.type !== "acquired") continue;
        wins += 1;
        acquired.push(result.fence.generation);
        const [first, second] = await Promise.all([
          host.publish({ fence: result.fence, workspaceCandidate, outputCandidate: null }),
          host.publish({ fence: result.fence, workspaceCandidate, outputCandidate: null }),
        ]);
        for (const outcome of [first, second])
          if (outcome?.type === "published")
            published.push({ generation: result.fence.generation, revision: outcome.revision });
        await host.release({ fence: result.fence, reason: "completed" });
      }
    };
    await Promise.all(hosts.map(worker));

    expect(acquired).toHaveLength(HOSTS * 3);
    expect(new Set(acquired).size).toBe(acquired.length);
    expect([...acquired].sort((a, b) => a - b)).toEqual(
      Array.from({ length: acquired.length }, (_, index) => index + 1),
    );
    // Each generation published exactly once, and revisions follow generations without gap or repeat.
    const byGeneration = [...published].sort((a, b) => a.generation - b.generation);
    expect(byGeneration.map((entry) => entry.generation)).toEqual(
      [...acquired].sort((a, b) => a - b),
    );
    expect(byGeneration.map((entry) => entry.revision)).toEqual(
      byGeneration.map((_, index) => index + 1),
    );
  }, 300_000);
});
