/**
 * Soak benchmark, run with `pnpm bench:soak` (root). Prints figures; asserts nothing.
 *
 * `OMA_BENCH_ITEMS` (default 200) work items, one at a time, through the `oma-environment-worker` bin (a child
 * process) over the local stack (a child process: the container server, with Cloudflare's bridge Worker in
 * local workerd as its child), claimed from the local control plane (this process). The items are turns of
 * `OMA_SOAK_SESSIONS` sessions in turn; each overwrites a 1 MiB file and appends a line, so each session's
 * published tree stays the same size and the checkpoint sweep (on a short schedule here) can bound the store.
 *
 * Figures, after a warm-up and at the end: RSS and open files of every process, containers running, the disk of
 * the containers' trees and of workerd's Durable Object state, the blob store's and the SQLite store's bytes;
 * RSS samples along the way give each process's growth per item (least squares over the samples). workerd's
 * RSS is also read right after a full collection of its isolates (through its inspector): what the Worker
 * keeps, apart from garbage V8 has not collected yet. Last, a heap snapshot of the Worker's isolate counts the
 * Durable Objects workerd still holds (the pool's and every sandbox's not evicted yet).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { amaWorkerProfile, jsonLines, serviceEnvironment } from "./service-child.js";

const ITEMS = Number(process.env.OMA_BENCH_ITEMS ?? 200);
const SESSIONS = Number(process.env.OMA_SOAK_SESSIONS ?? 4);
const WARM_UP = Math.min(10, Math.floor(ITEMS / 10));
const SAMPLE_EVERY = Math.max(1, Math.floor(ITEMS / 20));
const SWEEP_INTERVAL_MS = 10_000;
const SWEEP_GRACE_MS = 5_000;
const SERVICE_BIN = join(
  dirname(
    createRequire(import.meta.url).resolve(
      "@open-managed-agents/environment-worker-service/package.json",
    ),
  ),
  "dist/bin.js",
);
const STACK = fileURLToPath(new URL("./soak-stack.js", import.meta.url));

const { installAmaWorkerBin } = await import("@open-managed-agents/ama-worker");
const { startLocalControlPlane } = await import("@open-managed-agents/local-control-plane");

const amaBin = await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR);
const BIN_DIRECTORY = dirname(amaBin);
process.env.PATH = `${BIN_DIRECTORY}:${process.env.PATH ?? ""}`;
const plane = await startLocalControlPlane();
const rootDir = await mkdtemp(join(tmpdir(), "oma-bench-soak-"));
const containersDir = join(rootDir, "containers");
const stateDir = join(rootDir, "bridge-state");
const blobsDir = join(rootDir, "blobs");
const storePath = join(rootDir, "runtime.sqlite");
await Promise.all([mkdir(containersDir), mkdir(stateDir), mkdir(blobsDir)]);

const stack = spawn(process.execPath, ["--experimental-websocket", STACK], {
  stdio: ["pipe", "pipe", "inherit"],
  env: {
    ...process.env,
    OMA_SOAK_EGRESS_ALLOW: new URL(plane.url).host,
    OMA_SOAK_ROOT_DIR: containersDir,
    OMA_SOAK_STATE_DIR: stateDir,
  },
});
const stackLines = jsonLines(stack, stack.stdout as NodeJS.ReadableStream);
const bridge = (await stackLines.next()) as { url: string; apiKey: string };

/** Pids of every descendant of `pid`, from /proc. */
function descendants(pid: number): { pid: number; name: string }[] {
  const parents = new Map<number, { pid: number; name: string }[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(parent, [...(parents.get(parent) ?? []), { pid: Number(entry), name }]);
    } catch {}
  }
  const found: { pid: number; name: string }[] = [];
  const walk = (from: number) => {
    for (const child of parents.get(from) ?? []) {
      found.push(child);
      walk(child.pid);
    }
  };
  walk(pid);
  return found;
}

const workerdPid = descendants(stack.pid as number).find((process) =>
  process.name.includes("workerd"),
)?.pid;
if (workerdPid === undefined) throw new Error("no workerd process below the local stack");

function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN) * 1024;
}
const openFiles = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
function diskBytes(path: string): number {
  try {
    return Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0]);
  } catch {
    return Number.NaN;
  }
}
function filesBytes(paths: readonly string[]): number {
  return paths.reduce(
    (sum, path) => sum + (Number.isFinite(diskBytes(path)) ? diskBytes(path) : 0),
    0,
  );
}

const environment = plane.createEnvironment({ name: "bench-soak" });
const profile = amaWorkerProfile(BIN_DIRECTORY, 300);
const service: ChildProcess = spawn(process.execPath, [SERVICE_BIN], {
  stdio: ["ignore", "ignore", "pipe"],
  env: serviceEnvironment(
    { environment, planeUrl: plane.url, bridge, storePath, blobsDirectory: blobsDir, profile },
    {
      OMA_POLL_INTERVAL_MS: "500",
      OMA_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
      OMA_SWEEP_GRACE_MS: String(SWEEP_GRACE_MS),
    },
  ),
});
const serviceLines = jsonLines(service, service.stderr as NodeJS.ReadableStream);
await serviceLines.until(() => serviceLines.all.some((line) => line.event === "service.started"));

interface Snapshot {
  item: number;
  rss: Record<string, number>;
  /** workerd's RSS right after a full collection. */
  workerdCollected: number;
  files: Record<string, number>;
  containers: number;
  containerDisk: number;
  stateDisk: number;
  blobBytes: number;
  storeBytes: number;
}
const PROCESSES = {
  "oma-environment-worker": service.pid as number,
  workerd: workerdPid,
  "container server": stack.pid as number,
};

async function snapshot(item: number): Promise<Snapshot> {
  stack.stdin?.write("stats\n");
  const { containers } = (await stackLines.next()) as { containers: number };
  const rss: Record<string, number> = {};
  const files: Record<string, number> = {};
  for (const [name, pid] of Object.entries(PROCESSES)) {
    rss[name] = rssBytes(pid);
    files[name] = openFiles(pid);
  }
  stack.stdin?.write("collect\n");
  const { collected } = (await stackLines.next()) as { collected: boolean };
  if (!collected) throw new Error("workerd's inspector did not run the collection");
  return {
    item,
    rss,
    workerdCollected: rssBytes(workerdPid as number),
    files,
    containers,
    containerDisk: diskBytes(containersDir),
    stateDisk: diskBytes(stateDir),
    blobBytes: diskBytes(blobsDir),
    storeBytes: filesBytes([storePath, `${storePath}-wal`, `${storePath}-shm`]),
  };
}

const sessions = Array.from(
  { length: SESSIONS },
  () => plane.createSession({ environmentId: environment.id }).id,
);
const outcomes = new Map<string, number>();
let done = 0;
async function runItem(index: number): Promise<void> {
  const sessionId = sessions[index % SESSIONS] as string;
  const command = `head -c 1048576 /dev/urandom > data.bin && echo turn-${index} >> turns.log`;
  plane.queueTurn(sessionId, { toolCalls: [{ name: "bash", input: { command } }] });
  await serviceLines.until(
    () => serviceLines.all.filter((line) => line.event === "work.done").length > done,
  );
  const line = serviceLines.all.filter((entry) => entry.event === "work.done")[done] as Record<
    string,
    unknown
  >;
  done += 1;
  const outcome = String(line.outcome) + (line.code ? ` ${String(line.code)}` : "");
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
/** Slope of `y` over `x` by least squares. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const numerator = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const denominator = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return denominator === 0 ? Number.NaN : numerator / denominator;
}

const started = Date.now();
try {
  for (let index = 0; index < WARM_UP; index += 1) await runItem(index);
  const first = await snapshot(WARM_UP);
  const samples: Snapshot[] = [first];
  for (let index = WARM_UP; index < ITEMS; index += 1) {
    await runItem(index);
    if ((index + 1 - WARM_UP) % SAMPLE_EVERY === 0) {
      const sample = await snapshot(index + 1);
      samples.push(sample);
      process.stderr.write(
        `  item ${index + 1}: ${Object.entries(sample.rss)
          .map(([name, bytes]) => `${name} ${mib(bytes)}`)
          .join(
            ", ",
          )} (collected ${mib(sample.workerdCollected)}), blobs ${mib(sample.blobBytes)}\n`,
      );
    }
  }
  // One more sweep period, so the last items' superseded checkpoints are past their grace.
  await new Promise((resolve) => setTimeout(resolve, SWEEP_INTERVAL_MS + SWEEP_GRACE_MS + 2_000));
  const last = await snapshot(ITEMS);
  // Taken after the last RSS reading: a heap snapshot grows workerd's RSS by itself.
  stack.stdin?.write("count\n");
  const { durableObjects } = (await stackLines.next()) as { durableObjects: number | null };
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(
    `soak benchmark: ${ITEMS} items (${SESSIONS} sessions, one 1 MiB file rewritten per turn) in ${minutes} min`,
  );
  out(`  outcomes: ${[...outcomes].map(([outcome, count]) => `${count} ${outcome}`).join(", ")}`);
  out(`  measured after item ${first.item} (warm-up) and at the end, after one more sweep period:`);
  for (const name of Object.keys(PROCESSES)) {
    const perItem = slope(samples.map((sample) => [sample.item, sample.rss[name] as number]));
    out(
      `  ${name.padEnd(24)} RSS ${mib(first.rss[name] as number)} → ${mib(last.rss[name] as number)}` +
        ` (${(perItem / 1024).toFixed(1)} KiB/item by least squares), open files ${first.files[name]} → ${
          last.files[name]
        }`,
    );
  }
  const collectedPerItem = slope(samples.map((sample) => [sample.item, sample.workerdCollected]));
  out(
    `  workerd after collection RSS ${mib(first.workerdCollected)} → ${mib(last.workerdCollected)}` +
      ` (${(collectedPerItem / 1024).toFixed(1)} KiB/item by least squares)`,
  );
  out(`  Durable Objects alive in workerd at the end ${durableObjects ?? "(no answer)"}`);
  out(`  containers running       ${first.containers} → ${last.containers}`);
  out(`  container trees on disk  ${mib(first.containerDisk)} → ${mib(last.containerDisk)}`);
  out(`  Durable Object state     ${mib(first.stateDisk)} → ${mib(last.stateDisk)}`);
  out(`  blob store               ${mib(first.blobBytes)} → ${mib(last.blobBytes)}`);
  out(`  SQLite store             ${mib(first.storeBytes)} → ${mib(last.storeBytes)}`);
} finally {
  service.kill("SIGTERM");
  await new Promise((resolve) =>
    service.exitCode !== null ? resolve(null) : service.once("exit", resolve),
  );
  stack.stdin?.write("stop\n");
  await new Promise((resolve) =>
    stack.exitCode !== null ? resolve(null) : stack.once("exit", resolve),
  );
  await plane.stop();
  await rm(rootDir, { recursive: true, force: true });
}
