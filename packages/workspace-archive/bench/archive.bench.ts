import { spawn } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { extractArchive, packDirectory } from "../src/index.js";
import { removeTree } from "../src/remove-tree.js";
import { writeFixture } from "./workspace-fixture.js";

const MIB = 1024 * 1024;
const LARGE_FILES = 4;
const LARGE_FILE_BYTES = Number(process.env.BENCH_LARGE_FILE_MIB ?? 256) * MIB;
const ROUNDS = 2;

/** Samples this process's RSS so the peak of each phase can be reported. */
function rssSampler() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  return {
    reset: () => {
      peak = process.memoryUsage().rss;
    },
    peak: () => Math.max(peak, process.memoryUsage().rss),
    stop: () => clearInterval(timer),
  };
}

function shell(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { stdio: "inherit" });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`))));
  });
}

async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Best of ROUNDS, alternating the two contenders so both see the same cache state. */
async function compare(ours: () => Promise<void>, gnu: () => Promise<void>, before: () => Promise<void>) {
  let best = { ours: Infinity, gnu: Infinity };
  for (let round = 0; round < ROUNDS; round += 1) {
    await before();
    const gnuSeconds = await timed(gnu);
    await before();
    const ourSeconds = await timed(ours);
    best = { ours: Math.min(best.ours, ourSeconds), gnu: Math.min(best.gnu, gnuSeconds) };
  }
  return best;
}

function report(label: string, bytes: number, seconds: { ours: number; gnu: number }, peakRss: number): void {
  const rate = (value: number) => `${(bytes / MIB / value).toFixed(0)} MB/s`;
  const ratio = seconds.gnu / seconds.ours;
  console.log(
    `${label.padEnd(8)} ours ${seconds.ours.toFixed(2)} s (${rate(seconds.ours)})  GNU tar ${seconds.gnu.toFixed(2)} s (${rate(seconds.gnu)})  ` +
      `ratio ${ratio.toFixed(2)}× ${ratio >= 0.7 ? "≥" : "<"} 0.7×  peak RSS ${(peakRss / MIB).toFixed(0)} MiB ${peakRss <= 128 * MIB ? "≤" : ">"} 128 MiB`,
  );
}

async function main(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), "oma-archive-bench-"));
  const workspace = join(base, "workspace");
  const archiveFile = join(base, "workspace.tar");
  const target = join(base, "restored");
  const sampler = rssSampler();
  try {
    console.log(`generating workspace in ${workspace} …`);
    const bytes = await writeFixture(workspace, { smallFiles: 10_000, largeFiles: LARGE_FILES, largeFileBytes: LARGE_FILE_BYTES });
    console.log(`workspace: 10000 small files + ${LARGE_FILES} × ${LARGE_FILE_BYTES / MIB} MiB = ${(bytes / MIB).toFixed(0)} MiB`);
    await shell(`tar -cf '${archiveFile}' -C '${workspace}' .`);

    let packRss = 0;
    const pack = await compare(
      async () => {
        sampler.reset();
        const packed = packDirectory(workspace);
        for await (const chunk of packed.stream) void chunk;
        const digest = await packed.digest;
        if (digest.files !== 10_000 + LARGE_FILES) throw new Error(`packed ${digest.files} files`);
        packRss = Math.max(packRss, sampler.peak());
      },
      () => shell(`tar -cf - -C '${workspace}' . | cat > /dev/null`),
      async () => undefined,
    );
    report("pack", bytes, pack, packRss);

    let extractRss = 0;
    const extract = await compare(
      async () => {
        sampler.reset();
        await extractArchive(createReadStream(archiveFile, { highWaterMark: MIB }), target);
        extractRss = Math.max(extractRss, sampler.peak());
      },
      () => shell(`mkdir -p '${target}' && tar -xf '${archiveFile}' -C '${target}'`),
      () => removeTree(target),
    );
    report("extract", bytes, extract, extractRss);

    const ourArchive = join(base, "ours.tar");
    await pipeline(packDirectory(workspace).stream, createWriteStream(ourArchive));
    await removeTree(target);
    await shell(`mkdir -p '${target}' && tar -xf '${ourArchive}' -C '${target}' && diff -r '${workspace}' '${target}' && echo 'GNU tar restores our archive: identical'`);
  } finally {
    sampler.stop();
    await removeTree(base);
    console.log(`removed ${base}`);
  }
}

await main();
