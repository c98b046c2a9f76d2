import { spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { extractArchive, packDirectory } from "../src/index.js";
import { removeTree } from "../src/remove-tree.js";
import { writeFixture } from "./workspace-fixture.js";

const MIB = 1024 * 1024;
const SMALL_FILES = 10_000;
const LARGE_FILES = 4;
const LARGE_FILE_BYTES = Number(process.env.BENCH_LARGE_FILE_MIB ?? 256) * MIB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SELF = fileURLToPath(import.meta.url);

interface Measurement {
  /** Wall time; for our child processes the time of the operation itself, without Node's start-up. */
  readonly seconds: number;
  /** Peak resident set of the measured process, bytes. */
  readonly peakRss: number;
  /** CPU time (user + system, all threads and waited-for children); for our child processes the operation's own. */
  readonly cpuSeconds: number;
  /** Our child processes: CPU time of the main thread alone during the operation (the critical path). */
  readonly mainThreadSeconds: number;
}

/** CPU seconds of this process's main thread so far (Linux `/proc`, clock ticks of 10 ms). */
function mainThreadCpu(): number {
  const fields =
    readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs a command under `/usr/bin/time`, returning wall and CPU seconds and the peak RSS of the process tree's largest member. */
function measure(command: string, args: readonly string[]): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn("/usr/bin/time", ["-f", "%U %S %M", command, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => {
      const wall = Number(process.hrtime.bigint() - start) / 1e9;
      const [user, system, kib] = (stderr.trim().split("\n").at(-1) ?? "")
        .split(" ")
        .map(Number) as [number, number, number];
      const reported = /^operation-seconds (\S+) cpu (\S+) main-thread (\S+)$/m.exec(stdout);
      if (code !== 0 || !Number.isFinite(kib))
        reject(new Error(`${command} ${args.join(" ")} failed (${code}): ${stderr}`));
      else
        resolve({
          seconds: reported ? Number(reported[1]) : wall,
          peakRss: kib * 1024,
          cpuSeconds: reported ? Number(reported[2]) : user + system,
          mainThreadSeconds: reported ? Number(reported[3]) : NaN,
        });
    });
  });
}

interface Comparison {
  ours: number;
  gnu: number;
  oursCpu: number;
  oursMainThread: number;
  gnuCpu: number;
  peakRss: number;
}

/** Best wall and CPU time of ROUNDS, alternating contenders so both meet the same cache and load; RSS is the worst seen. */
async function compare(
  ours: () => Promise<Measurement>,
  gnu: () => Promise<Measurement>,
  before: () => Promise<void>,
): Promise<Comparison> {
  const best = {
    ours: Infinity,
    gnu: Infinity,
    oursCpu: Infinity,
    oursMainThread: Infinity,
    gnuCpu: Infinity,
    peakRss: 0,
  };
  for (let round = 0; round < ROUNDS; round += 1) {
    await before();
    const theirs = await gnu();
    best.gnu = Math.min(best.gnu, theirs.seconds);
    best.gnuCpu = Math.min(best.gnuCpu, theirs.cpuSeconds);
    await before();
    const run = await ours();
    best.ours = Math.min(best.ours, run.seconds);
    best.oursCpu = Math.min(best.oursCpu, run.cpuSeconds);
    best.oursMainThread = Math.min(best.oursMainThread, run.mainThreadSeconds);
    best.peakRss = Math.max(best.peakRss, run.peakRss);
  }
  return best;
}

function report(label: string, bytes: number, result: Comparison): void {
  const rate = (seconds: number) => `${(bytes / MIB / seconds).toFixed(0)} MB/s`;
  const ratio = result.gnu / result.ours;
  console.log(
    `${label.padEnd(34)} ours ${result.ours.toFixed(2)} s (${rate(result.ours)})  GNU tar ${result.gnu.toFixed(2)} s (${rate(result.gnu)})  ` +
      `ratio ${ratio.toFixed(2)}× (target ≥ 0.7×)  peak RSS ${(result.peakRss / MIB).toFixed(0)} MiB (target ≤ 128 MiB)  ` +
      `CPU ours ${result.oursCpu.toFixed(2)} s (main thread ${result.oursMainThread.toFixed(2)} s), GNU tar ${result.gnuCpu.toFixed(2)} s  load ${loadavg()[0]?.toFixed(2)}`,
  );
}

async function checkDigest(digest: Promise<{ files: number; sha256: string }>): Promise<void> {
  const { files, sha256 } = await digest;
  if (files !== SMALL_FILES + LARGE_FILES || sha256.length !== 64)
    throw new Error(`packed ${files} files`);
}

/** Child mode: one pack or extract in a fresh process, so its peak RSS is ours alone. */
async function child(mode: string, source: string, target: string): Promise<void> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  const mainStart = mainThreadCpu();
  if (mode === "pack") {
    // A null sink that reuses one buffer, as `cat > /dev/null` does: a BYOB reader of the byte stream.
    const packed = packDirectory(source);
    const reader = packed.toWebStream().getReader({ mode: "byob" });
    let view = new Uint8Array(MIB);
    for (;;) {
      const { value, done } = await reader.read(view);
      if (done) break;
      view = new Uint8Array(value.buffer);
    }
    await checkDigest(packed.digest);
  } else if (mode === "pack-node") {
    const packed = packDirectory(source);
    for await (const chunk of packed.stream) void chunk;
    await checkDigest(packed.digest);
  } else {
    await extractArchive({ file: source }, target);
  }
  const cpu = process.cpuUsage(cpuStart);
  const main = mainThreadCpu() - mainStart;
  console.log(
    `operation-seconds ${Number(process.hrtime.bigint() - start) / 1e9} cpu ${(cpu.user + cpu.system) / 1e6} main-thread ${main.toFixed(2)}`,
  );
}

async function main(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), "oma-archive-bench-"));
  const workspace = join(base, "workspace");
  const archiveFile = join(base, "workspace.tar");
  const target = join(base, "restored");
  try {
    console.log(`generating workspace in ${workspace} …`);
    const bytes = await writeFixture(workspace, {
      smallFiles: SMALL_FILES,
      largeFiles: LARGE_FILES,
      largeFileBytes: LARGE_FILE_BYTES,
    });
    console.log(
      `workspace: ${SMALL_FILES} small files + ${LARGE_FILES} × ${LARGE_FILE_BYTES / MIB} MiB = ${(bytes / MIB).toFixed(0)} MiB; best of ${ROUNDS} rounds`,
    );
    await pipeline(packDirectory(workspace).stream, createWriteStream(archiveFile));

    const pack = await compare(
      () => measure(process.execPath, [SELF, "pack", workspace, ""]),
      () => measure("sh", ["-c", `tar -cf - -C '${workspace}' . | cat > /dev/null`]),
      async () => undefined,
    );
    report("pack", bytes, pack);
    const packNode = await compare(
      () => measure(process.execPath, [SELF, "pack-node", workspace, ""]),
      () => measure("sh", ["-c", `tar -cf - -C '${workspace}' . | cat > /dev/null`]),
      async () => undefined,
    );
    report("pack (Node stream, fresh chunks)", bytes, packNode);

    const extract = await compare(
      () => measure(process.execPath, [SELF, "extract", archiveFile, target]),
      () =>
        measure("sh", ["-c", `mkdir -p '${target}' && tar -xf '${archiveFile}' -C '${target}'`]),
      () => removeTree(target),
    );
    report("extract", bytes, extract);

    await removeTree(target);
    const check = await measure("sh", [
      "-c",
      `mkdir -p '${target}' && tar -xf '${archiveFile}' -C '${target}' && diff -r '${workspace}' '${target}'`,
    ]);
    console.log(`GNU tar restores our archive identically (${check.seconds.toFixed(2)} s)`);
  } finally {
    await removeTree(base);
    console.log(`removed ${base}`);
  }
}

const [mode, source, target] = process.argv.slice(2);
if (mode === "pack" || mode === "pack-node" || mode === "extract")
  await child(mode, source as string, target as string);
else await main();
