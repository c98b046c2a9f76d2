/**
 * Claimed-work load benchmark (`pnpm bench:environment`), in workerd as the tests run: `BENCH_ITEMS`
 * sessions (default 50) each queue one turn on the local control plane; every signed webhook is delivered
 * to the Worker at once, as the platform would; the Worker claims with `ENVIRONMENT_MAX_CLAIMS`
 * (`BENCH_CONCURRENCY`, default 10) through its claim coordinator, one `EnvironmentRunner` per item, each
 * on its own container of the local container runtime running the SDK's worker. A single item run first,
 * in the same process tree, is the baseline. Prints wall time, item latencies, the peak of runners running
 * and of containers alive, and checks that every item ended stopped with nothing leaked. Timing is
 * reported, never asserted.
 */
import { listDurableObjectIds } from "cloudflare:test";
import { expect, it } from "vitest";
import { readEnvironmentSettings } from "../src/config.js";
import { call, testEnv } from "../test/support/api.js";
import {
  admin,
  deliver,
  environment,
  liveContainers,
  queueSessions,
  runCron,
  runningClaims,
} from "../test/support/environment.js";

const ITEMS = Number((testEnv as unknown as { BENCH_ITEMS?: string }).BENCH_ITEMS ?? "50");
const SAMPLE_MS = 500;
// Without progress for this long, the cron trigger's poll is run (and counted) as it would be deployed.
const STALL_MS = 60_000;

interface BatchFigures {
  readonly items: number;
  readonly wallMs: number;
  readonly latenciesMs: readonly number[];
  readonly peakRunning: number;
  readonly peakContainers: number;
  readonly cronFallbacks: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PlaneWork {
  readonly id: string;
  readonly state: string;
  readonly data: { readonly id: string };
}

interface EndedRow {
  readonly work_id: string;
  readonly status: string;
  readonly updated_at: number;
}

/** Claimed items that ended, from the Worker's own D1 table. */
async function endedRows(): Promise<EndedRow[]> {
  return (
    await testEnv.DB.prepare(
      "SELECT work_id, status, updated_at FROM environment_work WHERE status <> 'running'",
    ).all<EndedRow>()
  ).results;
}

async function runBatch(count: number): Promise<BatchFigures> {
  const { sessionIds, hooks } = await queueSessions(count);
  const started = Date.now();
  const answers = await Promise.all(hooks.map((hook) => deliver(hook)));
  expect(answers.map((answer) => answer.status)).toEqual(hooks.map(() => 202));

  let peakRunning = 0;
  let peakContainers = 0;
  let cronFallbacks = 0;
  let ended: EndedRow[] = [];
  const wanted = new Set(sessionIds);
  let lastProgress = Date.now();
  for (;;) {
    const [running, containers] = await Promise.all([runningClaims(), liveContainers()]);
    peakRunning = Math.max(peakRunning, running);
    peakContainers = Math.max(peakContainers, containers.length);
    const { data } = await admin<{ data: PlaneWork[] }>(
      `/admin/v1/work?environment_id=${environment.environmentId}`,
    );
    const items = data.filter((item) => wanted.has(item.data.id));
    const claimed = new Set(items.map((item) => item.id));
    const done = (await endedRows()).filter((row) => claimed.has(row.work_id));
    if (done.length > ended.length) lastProgress = Date.now();
    ended = done;
    if (
      ended.length === count &&
      items.length === count &&
      items.every((item) => item.state === "stopped")
    )
      break;
    if (Date.now() - lastProgress > STALL_MS) {
      cronFallbacks += 1;
      lastProgress = Date.now();
      await runCron();
    }
    await sleep(SAMPLE_MS);
  }
  const wallMs = Date.now() - started;
  const latenciesMs = ended.map((row) => row.updated_at - started).sort((a, b) => a - b);
  expect(ended.map((row) => row.status)).toEqual(ended.map(() => "completed"));
  return { items: count, wallMs, latenciesMs, peakRunning, peakContainers, cronFallbacks };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

function line(label: string, figures: BatchFigures): string {
  const { latenciesMs: l } = figures;
  return [
    label,
    figures.items,
    figures.wallMs,
    percentile(l, 50),
    percentile(l, 95),
    l.at(-1) ?? 0,
    figures.peakRunning,
    figures.peakContainers,
    figures.cronFallbacks,
  ].join(" | ");
}

it(`runs ${ITEMS} claimed items with bounded concurrency and leaks nothing`, async () => {
  const concurrency = readEnvironmentSettings(testEnv).maxClaimsPerPass;
  const baseline = await runBatch(1);
  const load = await runBatch(ITEMS);

  // Nothing leaked: no container alive, no orphan, every item stopped at the platform.
  await expect
    .poll(async () => (await liveContainers()).length, { timeout: 30_000, interval: 250 })
    .toBe(0);
  const orphans = ((await (await call("/v1/orphans")).json()) as { data: unknown[] }).data;
  const { data: platformWork } = await admin<{ data: { state: string }[] }>(
    `/admin/v1/work?environment_id=${environment.environmentId}`,
  );
  const runners = (await listDurableObjectIds(testEnv.ENVIRONMENT_RUNNER)).length;
  const serialMs = baseline.wallMs * load.items;

  const report = [
    `environment load: ${load.items} items, ENVIRONMENT_MAX_CLAIMS ${concurrency}, local container runtime (bubblewrap), workerd`,
    "run | items | wall ms | p50 ms | p95 ms | max ms | peak runners running | peak containers alive | cron fallbacks",
    "--- | --- | --- | --- | --- | --- | --- | --- | ---",
    line("baseline (1 item)", baseline),
    line("load", load),
    `ratio: load wall / (items × baseline wall) = ${(load.wallMs / serialMs).toFixed(3)} (effective parallelism ${(serialMs / load.wallMs).toFixed(2)}×, bound ${concurrency})`,
    `throughput: ${((load.items * 60_000) / load.wallMs).toFixed(1)} items/min`,
    `after: containers alive 0, orphans ${orphans.length}, EnvironmentRunner objects ${runners}, platform work items ${platformWork.length} (${platformWork.filter((work) => work.state === "stopped").length} stopped)`,
  ].join("\n");
  console.log(`\n${report}\n`);

  expect(load.peakRunning).toBeLessThanOrEqual(concurrency);
  expect(orphans).toEqual([]);
  expect(platformWork.every((work) => work.state === "stopped")).toBe(true);
  expect(runners).toBe(load.items + baseline.items);
});
