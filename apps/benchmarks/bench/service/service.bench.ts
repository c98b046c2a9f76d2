/**
 * Service benchmark, run with `pnpm bench:service`. Prints figures; asserts nothing.
 *
 * Each item is one session turn with one `bash` call, claimed from the local control plane:
 * - measured: the `oma-environment-worker` bin as a child process, over the local stack (Cloudflare's bridge
 *   Worker in local workerd, bubblewrap-confined containers), SQLite store, file checkpoint store;
 * - baseline, in the same run: the SDK's WorkPoller claims and `oma-ama-worker` runs as a plain child process
 *   (what `pnpm bench:worker` calls its baseline): no host, no sandbox, no workspace kept.
 * Figures: claim → item done (medians), the bin's RSS idle after start and after the items.
 *
 * Then the bin's peak RSS while a `OMA_BENCH_WORKSPACE_MIB` (default 1024; 0 skips it) workspace of random
 * bytes checkpoints (turn 1), and while it restores and checkpoints again (turn 2, one file added): the
 * kernel's high-water mark of the bin's process (`VmHWM`, reset between the turns and at turn 2's
 * `restore.done`, so the restore's peak is printed apart), started as a deployer starts it (its launcher,
 * with the process settings it applies), and its RSS idle 3 s after it started. With `OMA_BENCH_PEAK_BASELINE=1` the same again with
 * `node dist/bin.js` and no settings, as the baseline.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runPlainWorker } from "../shared/plain-worker.js";
import { amaWorkerProfile, jsonLines, serviceEnvironment } from "./service-child.js";

const ITEMS = Number(process.env.OMA_BENCH_ITEMS ?? 5);
const IDLE_MS = 300;
/** The service package's root, found through its manifest as any dependant finds it. */
const SERVICE_ROOT = dirname(
  createRequire(import.meta.url).resolve(
    "@open-managed-agents/environment-worker-service/package.json",
  ),
);
const SERVICE_BIN = join(SERVICE_ROOT, "dist/bin.js");
const LAUNCHER = join(SERVICE_ROOT, "bin/oma-environment-worker.sh");
const WORKSPACE_MIB = Number(process.env.OMA_BENCH_WORKSPACE_MIB ?? 1024);
const PEAK_BASELINE = process.env.OMA_BENCH_PEAK_BASELINE === "1";

const { default: Anthropic } = await import("@anthropic-ai/sdk");
const { installAmaWorkerBin } = await import("@open-managed-agents/ama-worker");
const { startLocalControlPlane } = await import("@open-managed-agents/local-control-plane");
const { startLocalBridge } = await import("@open-managed-agents/local-container");

const amaBin = await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR);
const BIN_DIRECTORY = dirname(amaBin);
process.env.PATH = `${BIN_DIRECTORY}:${process.env.PATH ?? ""}`;
// The control plane's default lease (90 s from the ack): a large restore outlasts it, and the bin's worker
// renews it until the harness starts.
const plane = await startLocalControlPlane();
// The sandboxes' only way out: the control plane's origin, through the local stack's filtering proxy.
const bridge = await startLocalBridge({ egressAllowList: [new URL(plane.url).host] });
const rootDir = await mkdtemp(join(tmpdir(), "oma-bench-service-"));

function queueItems(environmentId: string, count: number): string[] {
  return Array.from({ length: count }, () => {
    const session = plane.createSession({ environmentId });
    plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
    return session.id;
  });
}

async function baseline(): Promise<number[]> {
  const environment = plane.createEnvironment({ name: "bench-baseline" });
  const client = new Anthropic({ baseURL: plane.url, apiKey: null, authToken: null });
  const workdir = await mkdtemp(join(rootDir, "baseline-"));
  const samples: number[] = [];
  for (const _session of queueItems(environment.id, ITEMS)) {
    const poller = client.beta.environments.work.poller({
      environmentId: environment.id,
      environmentKey: environment.environmentKey,
      autoStop: false,
      drain: true,
      blockMs: null,
    });
    for await (const work of poller) {
      const claimed = Date.now();
      await runPlainWorker({ bin: amaBin, work, baseUrl: plane.url, workdir, idleMs: IDLE_MS });
      samples.push(Date.now() - claimed);
      break;
    }
  }
  return samples;
}

interface Line {
  event?: string;
  time?: string;
  workId?: string;
  http?: string;
}

/** Seconds summed over every call of one port method, from the bin's own histogram. */
function stepSeconds(metrics: string, port: string, call: string): number {
  const pattern = new RegExp(
    `^oma_transaction_step_duration_seconds_sum\\{[^}]*port="${port}"[^}]*call="${call}"[^}]*\\} (\\S+)`,
    "gm",
  );
  let total = 0;
  for (const match of metrics.matchAll(pattern)) total += Number(match[1]);
  return total;
}

interface Measured {
  samples: number[];
  idleRss: number;
  afterRss: number;
  /** Per-item means, ms. */
  sandboxMs: number;
  harnessMs: number;
  checkpointMs: number;
}

async function measured(): Promise<Measured> {
  const environment = plane.createEnvironment({ name: "bench-measured" });
  const profile = amaWorkerProfile(BIN_DIRECTORY, IDLE_MS);
  const storePath = join(rootDir, "runtime.sqlite");
  const blobsDirectory = join(rootDir, "blobs");
  const child: ChildProcess = spawn(process.execPath, [SERVICE_BIN], {
    stdio: ["ignore", "ignore", "pipe"],
    env: serviceEnvironment(
      { environment, planeUrl: plane.url, bridge, storePath, blobsDirectory, profile },
      { OMA_HTTP_PORT: "0", OMA_POLL_INTERVAL_MS: "1000" },
    ),
  });
  const reader = jsonLines(child, child.stderr as NodeJS.ReadableStream);
  const lines = reader.all as Line[];
  const until = reader.until;
  await until(() => lines.some((line) => line.event === "service.started"));
  const http = lines.find((line) => line.event === "service.started")?.http as string;
  const rss = async () => {
    const text = await (await fetch(`${http}/metrics`)).text();
    return Number(/^oma_process_resident_memory_bytes (\S+)/m.exec(text)?.[1]);
  };
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idleRss = await rss();
  const samples: number[] = [];
  // One item at a time, so each figure is one item's latency, not a queue's.
  for (let index = 0; index < ITEMS; index += 1) {
    queueItems(environment.id, 1);
    await until(() => lines.filter((line) => line.event === "work.done").length > index);
    const done = lines.filter((line) => line.event === "work.done")[index] as Line;
    const claimed = lines.find(
      (line) => line.event === "work.claimed" && line.workId === done.workId,
    );
    samples.push(Date.parse(done.time ?? "") - Date.parse(claimed?.time ?? ""));
  }
  const afterRss = await rss();
  const metrics = await (await fetch(`${http}/metrics`)).text();
  const perItem = (seconds: number) => (seconds * 1000) / ITEMS;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  return {
    samples,
    idleRss,
    afterRss,
    sandboxMs: perItem(
      stepSeconds(metrics, "sandbox", "acquire") + stepSeconds(metrics, "sandbox", "terminate"),
    ),
    harnessMs: perItem(stepSeconds(metrics, "harnessDriver", "run")),
    checkpointMs: perItem(stepSeconds(metrics, "workspace", "checkpoint")),
  };
}

interface Peaks {
  /** The bin's RSS 3 s after it started, before the first turn. */
  idle: number;
  checkpoint: number;
  restoreAndSecond: number;
  /** Turn 2 split at the bin's `restore.done` line: claim → restore done, then the rest of the item. */
  restore: number;
  afterRestore: number;
  /** `durationMs` of the bin's `restore.done` and first `checkpoint.done` lines. */
  restoreDurationMs: number;
  firstCheckpointDurationMs: number;
  checkpointMs: number;
  restoreAndSecondMs: number;
  outcomes: string[];
}

/** The bin's peak RSS over a large workspace's first checkpoint, then its restore and second checkpoint. */
async function peaks(launcher: boolean): Promise<Peaks> {
  const environment = plane.createEnvironment({
    name: `bench-peak-${launcher ? "launcher" : "plain"}`,
  });
  const profile = amaWorkerProfile(BIN_DIRECTORY, IDLE_MS);
  const directory = await mkdtemp(join(rootDir, "peak-"));
  const storePath = join(directory, "runtime.sqlite");
  const blobsDirectory = join(directory, "blobs");
  const env = serviceEnvironment(
    { environment, planeUrl: plane.url, bridge, storePath, blobsDirectory, profile },
    { OMA_POLL_INTERVAL_MS: "500", OMA_NODE: process.execPath },
  );
  for (const key of ["NODE_OPTIONS", "MALLOC_MMAP_THRESHOLD_", "OMA_NODE_ARGS"]) delete env[key];
  const child: ChildProcess = launcher
    ? spawn(LAUNCHER, [], { stdio: ["ignore", "ignore", "pipe"], env })
    : spawn(process.execPath, [SERVICE_BIN], { stdio: ["ignore", "ignore", "pipe"], env });
  const reader = jsonLines(child, child.stderr as NodeJS.ReadableStream);
  const lines = reader.all as Line[];
  const until = reader.until;
  const highWater = () =>
    Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]) *
    1024;
  // Writing 5 to clear_refs resets the high-water mark to the current RSS.
  const resetHighWater = () => writeFileSync(`/proc/${child.pid}/clear_refs`, "5");
  await until(() => lines.some((line) => line.event === "service.started"));
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idle =
    Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]) *
    1024;
  const session = plane.createSession({ environmentId: environment.id });
  const turn = async (command: string, index: number) => {
    const started = Date.now();
    plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command } }] });
    await until(() => lines.filter((line) => line.event === "work.done").length > index);
    const done = lines.filter((line) => line.event === "work.done")[index] as Line &
      Record<string, unknown>;
    const detail = done.code ? ` (${String(done.code)}: ${String(done.message)})` : "";
    return { ms: Date.now() - started, outcome: `${String(done.outcome)}${detail}` };
  };
  resetHighWater();
  const first = await turn(`head -c ${WORKSPACE_MIB}M /dev/urandom > big.bin`, 0);
  const checkpoint = highWater();
  resetHighWater();
  // Turn 2's peak split at its restore's end: the bin's `restore.done` line is looked for every 100 ms.
  let restore = Number.NaN;
  let peakSoFar = 0;
  const restoreWatch = setInterval(() => {
    if (!Number.isNaN(restore) || !lines.some((line) => line.event === "restore.done")) return;
    restore = highWater();
    resetHighWater();
  }, 100);
  const second = await turn("cmp -n 1 big.bin big.bin && echo second > second.txt", 1);
  clearInterval(restoreWatch);
  peakSoFar = highWater();
  const restoreAndSecond = Number.isNaN(restore) ? peakSoFar : Math.max(restore, peakSoFar);
  const durationOf = (event: string) =>
    Number((lines.find((line) => line.event === event) as Record<string, unknown>)?.durationMs);
  child.kill("SIGTERM");
  await new Promise((resolve) =>
    child.exitCode !== null ? resolve(null) : child.once("exit", resolve),
  );
  await rm(directory, { recursive: true, force: true });
  return {
    idle,
    checkpoint,
    restoreAndSecond,
    restore,
    afterRestore: peakSoFar,
    restoreDurationMs: durationOf("restore.done"),
    firstCheckpointDurationMs: durationOf("checkpoint.done"),
    checkpointMs: first.ms,
    restoreAndSecondMs: second.ms,
    outcomes: [first.outcome, second.outcome],
  };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

try {
  const base = median(await baseline());
  const run = await measured();
  const done = median(run.samples);
  process.stdout.write(
    `service benchmark: ${ITEMS} items of one bash call each, medians (idle cut-off ${IDLE_MS} ms in both)\n\n`,
  );
  process.stdout.write(
    `  claim → item done   baseline ${base.toFixed(0)} ms   bin ${done.toFixed(0)} ms   overhead ${(
      done - base
    ).toFixed(0)} ms per item\n`,
  );
  const rest = done - run.sandboxMs - run.harnessMs - run.checkpointMs;
  process.stdout.write(
    `  bin item, split (means): sandbox acquire+terminate ${run.sandboxMs.toFixed(
      0,
    )} ms, harness ${run.harnessMs.toFixed(0)} ms, `,
  );
  process.stdout.write(
    `checkpoint ${run.checkpointMs.toFixed(0)} ms, the rest (worker, fence, store, publish) ${rest.toFixed(
      0,
    )} ms\n`,
  );
  process.stdout.write(
    `  bin RSS             idle ${mib(run.idleRss)}   after the items ${mib(run.afterRss)}\n`,
  );
  if (WORKSPACE_MIB > 0) {
    const runs: [string, boolean][] = [["launcher (its settings)", true]];
    if (PEAK_BASELINE) runs.push(["node dist/bin.js, no settings", false]);
    process.stdout.write(
      `\n  bin peak RSS, a ${WORKSPACE_MIB} MiB workspace of random bytes (VmHWM):\n`,
    );
    for (const [name, launcher] of runs) {
      const peak = await peaks(launcher);
      process.stdout.write(
        `    ${name.padEnd(32)} first checkpoint ${mib(peak.checkpoint)} (item ${(
          peak.checkpointMs / 1000
        ).toFixed(1)} s), restore + second checkpoint ${mib(peak.restoreAndSecond)} (item ${(
          peak.restoreAndSecondMs / 1000
        ).toFixed(1)} s), outcomes ${peak.outcomes.join(", ")}\n`,
      );
      process.stdout.write(
        `    ${"".padEnd(32)} idle ${mib(peak.idle)}; checkpoint ${(
          peak.firstCheckpointDurationMs / 1000
        ).toFixed(1)} s; restore ${mib(peak.restore)} (${(peak.restoreDurationMs / 1000).toFixed(
          1,
        )} s), then harness + second checkpoint ${mib(peak.afterRestore)}\n`,
      );
    }
  }
} finally {
  await bridge.stop();
  await plane.stop();
  await rm(rootDir, { recursive: true, force: true });
}
