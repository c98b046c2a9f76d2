import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** Prefix of the one line the driver child prints with its result. */
export const RESULT_PREFIX = "OMA_BENCH_RESULT ";

const stepSchema = z.object({ step: z.string(), ms: z.number(), count: z.number(), bytes: z.number() });
const childResultSchema = z.object({
  mode: z.string(),
  elapsedMs: z.number(),
  steps: z.array(stepSchema),
  rssAtStartBytes: z.number(),
  peakRssBytes: z.number(),
  /** Peaks of `process.memoryUsage()` sampled through the run, and when RSS peaked. */
  memoryPeaks: z.object({ rss: z.number(), heapUsed: z.number(), heapTotal: z.number(), external: z.number(), arrayBuffers: z.number(), rssPeakAtMs: z.number() }),
  /** Every memory sample: [ms since the start, rss, heap total, heap used, array buffers], in whole MiB. */
  timeline: z.array(z.tuple([z.number(), z.number(), z.number(), z.number(), z.number()])).optional(),
  spans: z.array(z.object({ step: z.string(), start: z.number(), end: z.number() })).optional(),
  handle: z.custom<SandboxCheckpointHandle>((value) => typeof value === "object" && value !== null).optional(),
  runtimeId: z.string().optional(),
});

/** A young generation of 2 MiB semi-spaces: short-lived transfer buffers die young without growing it. */
const DRIVER_PROCESS_NODE_ARGS = ["--max-semi-space-size=2"];
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
}

/** Runs the driver child (a separate Node process, so its peak RSS is its own) and parses its result. */
export function runDriverChild(environment: ChildEnvironment, args: readonly string[]): Promise<ChildResult> {
  const script = fileURLToPath(new URL("./driver-child.js", import.meta.url));
  // e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the driver alone (not allowed in NODE_OPTIONS).
  const nodeArgs = (process.env.OMA_BENCH_CHILD_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
  // The process settings the driver's README asks of whatever owns its process (see its Memory section).
  const child = spawn(process.execPath, [...DRIVER_PROCESS_NODE_ARGS, ...nodeArgs, script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...DRIVER_PROCESS_ENV,
      OMA_BENCH_BRIDGE_URL: environment.bridgeUrl,
      OMA_BENCH_BRIDGE_API_KEY: environment.apiKey,
      OMA_BENCH_STORE_DIR: environment.storeDir,
      OMA_BENCH_SESSION: environment.sessionId,
      OMA_BENCH_SPOOL_DIR: environment.spoolDir,
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      const line = stdout.split("\n").find((candidate) => candidate.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) {
        reject(new Error(`driver child ${args[0]} exited ${code}: ${stderr.trim()}`));
        return;
      }
      resolve(childResultSchema.parse(JSON.parse(line.slice(RESULT_PREFIX.length))));
    });
  });
}
