/**
 * Seeded multi-owner chaos: several hosts share one SQLite fence store (better-sqlite3, in memory), each
 * with its own skewed clock, random work items, live checkpoints, caller aborts and one injected fault
 * at a random post-acquire boundary. After every seed the fencing, cleanup and secrecy invariants must hold.
 *
 *   OMA_CHAOS_SEEDS=<count>  seeds 1..count (default 500)
 *   OMA_CHAOS_SEED=<n>       replay one seed
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { runChaosSeed } from "./support/chaos-world.js";

// The SQL fence store hashes tokens with WebCrypto, which completes on a worker thread at a moment the
// manual clock does not control. Hashing synchronously (same SHA-256) makes every seed replay exactly.
beforeAll(() => {
  vi.spyOn(crypto.subtle, "digest").mockImplementation(async (_algorithm, data) => {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const digest = createHash("sha256").update(bytes).digest();
    return digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.byteLength);
  });
});
afterAll(() => vi.restoreAllMocks());

const single = process.env.OMA_CHAOS_SEED;
const count = Number(process.env.OMA_CHAOS_SEEDS ?? 500);
const seeds = single !== undefined ? [Number(single)] : Array.from({ length: count }, (_, index) => index + 1);

it(`keeps every invariant over ${seeds.length} seeded schedules`, { timeout: Math.max(60_000, seeds.length * 200) }, async () => {
  const failures: { seed: number; problems: string[] }[] = [];
  for (const seed of seeds) {
    const problems = await runChaosSeed(seed).catch((error: unknown) => [`threw: ${error instanceof Error ? error.stack : String(error)}`]);
    if (problems.length > 0) failures.push({ seed, problems });
  }
  for (const { seed, problems } of failures.slice(0, 10)) {
    console.error(
      `chaos seed ${seed} failed:\n  ${problems.join("\n  ")}\n` +
        `  replay: OMA_CHAOS_SEED=${seed} pnpm --filter @open-managed-agents/managed-runtime-host exec vitest run test/chaos.test.ts`,
    );
  }
  expect(failures.map(({ seed }) => seed)).toEqual([]);
});
