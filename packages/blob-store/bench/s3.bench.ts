// pnpm bench:s3 — a streamed 200 MiB upload to s3rver through the store's own multipart code and through
// @aws-sdk/lib-storage's Upload, with the same part size and concurrency. Reports time and peak RSS growth
// of each (one child process per run, alternating, so neither inherits the other's heap).
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startS3rver } from "../test/support/s3rver.js";

const MIB = 1024 * 1024;
const bytes = Number(process.env.OMA_BENCH_S3_MIB ?? "200") * MIB;
const rounds = Number(process.env.OMA_BENCH_S3_ROUNDS ?? "2");
const child = fileURLToPath(new URL("./upload-child.js", import.meta.url));

interface Run {
  readonly variant: string;
  readonly elapsedMs: number;
  readonly peakGrowthBytes: number;
}

const s3rver = await startS3rver();
try {
  const bucket = await s3rver.createBucket();
  const runs: Run[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const variant of ["hand-written", "lib-storage"]) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [child, variant, s3rver.endpoint, bucket, String(bytes)],
        { maxBuffer: 1024 * 1024 },
      );
      runs.push(JSON.parse(stdout) as Run);
    }
  }
  const summary = (variant: string) => {
    const own = runs.filter((run) => run.variant === variant);
    return {
      variant,
      bestMs: Math.min(...own.map((run) => run.elapsedMs)),
      worstRssMiB: Math.max(...own.map((run) => run.peakGrowthBytes)) / MIB,
    };
  };
  const hand = summary("hand-written");
  const lib = summary("lib-storage");
  console.log(
    `streamed upload of ${bytes / MIB} MiB to s3rver, 8 MiB parts, 4 in flight, best of ${rounds}`,
  );
  for (const row of [hand, lib])
    console.log(
      `  ${row.variant.padEnd(14)} ${row.bestMs.toFixed(0).padStart(7)} ms   peak RSS growth ${row.worstRssMiB.toFixed(0).padStart(4)} MiB`,
    );
  console.log(
    `  lib-storage / hand-written: time ×${(lib.bestMs / hand.bestMs).toFixed(2)}, RSS growth ×${(lib.worstRssMiB / Math.max(1, hand.worstRssMiB)).toFixed(2)}`,
  );
} finally {
  await s3rver.stop();
}
