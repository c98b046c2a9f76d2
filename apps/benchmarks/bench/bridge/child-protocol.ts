import { spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** The bridge driver's package, whose `bench:driver-child` script runs its driver with the client observed. */
const BRIDGE_PACKAGE = "@open-managed-agents/managed-runtime-cloudflare-bridge";

const stepSchema = z.object({
  step: z.string(),
  ms: z.number(),
  count: z.number(),
  bytes: z.number(),
});
const childResultSchema = z.object({
  mode: z.string(),
  elapsedMs: z.number(),
  steps: z.array(stepSchema),
  rssAtStartBytes: z.number(),
  peakRssBytes: z.number(),
  /** Peaks of `process.memoryUsage()` sampled through the run, and when RSS peaked. */
  memoryPeaks: z.object({
    rss: z.number(),
    heapUsed: z.number(),
    heapTotal: z.number(),
    external: z.number(),
    arrayBuffers: z.number(),
    rssPeakAtMs: z.number(),
  }),
  /** Every memory sample: [ms since the start, rss, heap total, heap used, array buffers], in whole MiB. */
  timeline: z
    .array(z.tuple([z.number(), z.number(), z.number(), z.number(), z.number()]))
    .optional(),
  spans: z.array(z.object({ step: z.string(), start: z.number(), end: z.number() })).optional(),
  handle: z
    .custom<SandboxCheckpointHandle>((value) => typeof value === "object" && value !== null)
    .optional(),
  runtimeId: z.string().optional(),
});

/**
 * A young generation of 2 MiB semi-spaces (short-lived transfer buffers die young without growing it), and an
 * old generation that grows by 30% of what survived a full collection before the next one, not up to 4 times.
 */
const DRIVER_PROCESS_NODE_ARGS = "--max-semi-space-size=2 --heap-growing-percent=30";
/** glibc maps allocations of 64 KiB and more on their own, so a freed part returns to the system at once. */
const DRIVER_PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: "65536" };

/** What one run of the driver child reports. */
export type ChildResult = z.output<typeof childResultSchema>;

/** Where the child finds the bridge and the store; the API key travels in the environment, never in argv. */
export interface ChildEnvironment {
  readonly bridgeUrl: string;
  readonly apiKey: string;
  readonly storeDir: string;
  readonly spoolDir: string;
  /** The session every checkpoint and restore of one workload run belongs to. */
  readonly sessionId: string;
  /** Where each child writes its result (one child runs at a time). */
  readonly resultFile: string;
}

/**
 * Runs the driver child (a separate Node process, so its peak RSS is its own) through the bridge package's
 * `bench:driver-child` script, and parses its result. `OMA_BENCH_CHILD_NODE_ARGS` passes on Node flags,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the driver alone (not allowed in NODE_OPTIONS).
 */
export async function runDriverChild(
  environment: ChildEnvironment,
  [mode, argument = ""]: readonly [string, string?],
): Promise<ChildResult> {
  await rm(environment.resultFile, { force: true });
  const child = spawn(
    "pnpm",
    ["--silent", "--filter", BRIDGE_PACKAGE, "run", "bench:driver-child"],
    {
      stdio: ["ignore", "pipe", "pipe"],
      // The process settings the driver's README asks of whatever owns its process (its Memory section).
      env: {
        ...process.env,
        ...DRIVER_PROCESS_ENV,
        OMA_BENCH_CHILD_NODE_ARGS:
          `${DRIVER_PROCESS_NODE_ARGS} ${process.env.OMA_BENCH_CHILD_NODE_ARGS ?? ""}`.trim(),
        OMA_BENCH_CHILD_MODE: mode,
        OMA_BENCH_CHILD_ARGUMENT: argument,
        OMA_BENCH_RESULT_FILE: environment.resultFile,
        OMA_BENCH_BRIDGE_URL: environment.bridgeUrl,
        OMA_BENCH_BRIDGE_API_KEY: environment.apiKey,
        OMA_BENCH_STORE_DIR: environment.storeDir,
        OMA_BENCH_SESSION: environment.sessionId,
        OMA_BENCH_SPOOL_DIR: environment.spoolDir,
      },
    },
  );
  let output = "";
  const keep = (chunk: string) => (output = (output + chunk).slice(-8192));
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  const text = code === 0 ? await readFile(environment.resultFile, "utf8").catch(() => null) : null;
  if (text === null)
    throw new Error(`driver child ${mode} exited ${code} without a result: ${output.trim()}`);
  return childResultSchema.parse(JSON.parse(text));
}
