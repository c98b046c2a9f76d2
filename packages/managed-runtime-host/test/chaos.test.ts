/**
 * Seeded multi-owner chaos: several hosts share one fence store, each with its own skewed clock, random work
 * items, live checkpoints, caller aborts and one injected fault at a random post-acquire boundary. After every
 * seed the fencing, cleanup and secrecy invariants must hold. The store is SQLite (better-sqlite3, in memory),
 * whose statements are observed as they run, and the run's Postgres server, whose own trigger keeps the history
 * (test/support/postgres-chaos-store.ts); there the clock moves once the calls in flight are answered, and the
 * order in which concurrent answers arrive is the server's, so a Postgres seed replays its schedule, not every
 * interleaving.
 *
 *   OMA_CHAOS_SEEDS=<count>     SQLite seeds 1..count (default 500)
 *   OMA_CHAOS_PG_SEEDS=<count>  Postgres seeds 1..count (default 20)
 *   OMA_CHAOS_SEED=<n>          replay one seed (on both stores)
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { type ChaosStore, runChaosSeed } from "./support/chaos-world.js";
import { postgresChaosStore } from "./support/postgres-chaos-store.js";
import { postgresSchemas } from "./support/postgres-schemas.js";

// The SQL fence store hashes tokens with WebCrypto, which completes on a worker thread at a moment the
// manual clock does not control. Hashing synchronously (same SHA-256) makes every seed replay exactly.
beforeAll(() => {
  vi.spyOn(crypto.subtle, "digest").mockImplementation(async (_algorithm, data) => {
    const bytes =
      data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const digest = createHash("sha256").update(bytes).digest();
    return digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.byteLength);
  });
});
afterAll(() => vi.restoreAllMocks());

const single = process.env.OMA_CHAOS_SEED;
const count = Number(process.env.OMA_CHAOS_SEEDS ?? 500);
const pgCount = Number(process.env.OMA_CHAOS_PG_SEEDS ?? 20);
const seedsOf = (n: number) =>
  single !== undefined ? [Number(single)] : Array.from({ length: n }, (_, index) => index + 1);
const seeds = seedsOf(count);
const pgSeeds = seedsOf(pgCount);
const schemas = postgresSchemas();

async function runSeeds(
  label: string,
  list: readonly number[],
  storeOf: () => Promise<ChaosStore | undefined>,
): Promise<void> {
  const failures: { seed: number; problems: string[] }[] = [];
  for (const seed of list) {
    const store = await storeOf();
    const problems = await runChaosSeed(seed, store)
      .catch((error: unknown) => [`threw: ${error instanceof Error ? error.stack : String(error)}`])
      .finally(() => store?.close());
    if (problems.length > 0) failures.push({ seed, problems });
  }
  for (const { seed, problems } of failures.slice(0, 10)) {
    console.error(
      `chaos seed ${seed} (${label}) failed:\n  ${problems.join("\n  ")}\n` +
        `  replay: OMA_CHAOS_SEED=${seed} pnpm --filter @open-managed-agents/managed-runtime-host exec vitest run test/chaos.test.ts`,
    );
  }
  expect(failures.map(({ seed }) => seed)).toEqual([]);
}

it(`keeps every invariant over ${seeds.length} seeded schedules on SQLite`, {
  timeout: Math.max(60_000, seeds.length * 200),
}, async () => {
  await runSeeds("SQLite", seeds, async () => undefined);
});

it(`keeps every invariant over ${pgSeeds.length} seeded schedules on Postgres`, {
  timeout: Math.max(120_000, pgSeeds.length * 3_000),
}, async () => {
  // Each seed on a schema of its own, so its event log holds its own history only.
  await runSeeds("Postgres", pgSeeds, async () =>
    postgresChaosStore(await schemas.client({ maxConnections: 8 })),
  );
});
