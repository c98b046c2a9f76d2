/**
 * Fleet throughput (pnpm bench:fleet): items per minute for 1, 2 and 4 `oma-environment-worker` processes sharing
 * one Postgres store, over the local control plane and the local stack. Each size gets a fresh stack and the same
 * work: OMA_BENCH_SESSIONS sessions (default 8) of OMA_BENCH_TURNS turns (default 2) queued back to back, each a
 * `bash` call; timed from the queue to the last item published. One worker is the baseline of the same run.
 * Concurrency per worker: OMA_BENCH_CONCURRENCY (default 2).
 */
import { startFleet } from "../test/support/fleet.js";

const SESSIONS = Number(process.env.OMA_BENCH_SESSIONS ?? 8);
const TURNS = Number(process.env.OMA_BENCH_TURNS ?? 2);
const CONCURRENCY = Number(process.env.OMA_BENCH_CONCURRENCY ?? 2);
const SIZES = (process.env.OMA_BENCH_WORKERS ?? "1,2,4").split(",").map(Number);

const rows: {
  workers: number;
  items: number;
  seconds: number;
  perMinute: number;
  failed: number;
}[] = [];
for (const workers of SIZES) {
  const scale = {
    workers,
    concurrency: CONCURRENCY,
    sessions: SESSIONS,
    turns: TURNS,
    readOnlyMs: 0,
  };
  const fleet = await startFleet(scale);
  try {
    const started = performance.now();
    const plans = fleet.queueSessions(SESSIONS, TURNS);
    const done = await fleet.waitForTurns(plans);
    const seconds = (performance.now() - started) / 1000;
    const reports = fleet.lines().filter((line) => line.event === "work.done");
    const failed = reports.filter((line) => line.outcome !== "completed").length;
    rows.push({
      workers,
      items: done.length,
      seconds,
      perMinute: (done.length / seconds) * 60,
      failed,
    });
    process.stdout.write(
      `${workers} worker(s): ${done.length} items in ${seconds.toFixed(1)} s, ` +
        `${((done.length / seconds) * 60).toFixed(1)} items/min (${failed} reports not completed)\n`,
    );
  } finally {
    await fleet.close();
  }
}

const base = rows[0];
process.stdout.write(`\nworkers  items  seconds  items/min  vs ${base?.workers ?? 1} worker\n`);
for (const row of rows)
  process.stdout.write(
    `${String(row.workers).padStart(7)}  ${String(row.items).padStart(5)}  ` +
      `${row.seconds.toFixed(1).padStart(7)}  ` +
      `${row.perMinute.toFixed(1).padStart(9)}  ${base ? (row.perMinute / base.perMinute).toFixed(2) : "-"}x\n`,
  );
