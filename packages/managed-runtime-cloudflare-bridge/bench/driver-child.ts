/**
 * The driver side of `pnpm bench:bridge` (apps/benchmarks runs it with `pnpm bench:driver-child`), in its
 * own Node process so its peak RSS is the driver's alone. `OMA_BENCH_CHILD_MODE`: `idle` (build the driver,
 * do nothing), `checkpoint` (of the sandbox `OMA_BENCH_CHILD_ARGUMENT` names), `restore` (of the handle
 * JSON in `OMA_BENCH_CHILD_ARGUMENT`). Writes its result as JSON to `OMA_BENCH_RESULT_FILE`.
 */
import { writeFileSync } from "node:fs";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import { ownPeakRssBytes } from "@open-managed-agents/runtime-utils/node";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { resolveBridgeOptions } from "../src/options.js";
import {
  createStepRecorder,
  instrumentClient,
  instrumentStore,
  summarizeSpans,
} from "./instrument.js";

/** How often memory is sampled: each figure's peak says which kind of memory a phase's peak RSS is. */
const MEMORY_SAMPLE_MS = 50;

/** Samples `process.memoryUsage()` and keeps each figure's peak and when (ms since the start) RSS peaked. */
function sampleMemory(now: () => number) {
  const peaks = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
  let rssPeakAtMs = 0;
  // Every sample, in whole MiB: [ms, rss, heap total, heap used, array buffers].
  const timeline: Array<[number, number, number, number, number]> = [];
  const sample = () => {
    const usage = process.memoryUsage();
    timeline.push([
      Math.round(now()),
      ...([usage.rss, usage.heapTotal, usage.heapUsed, usage.arrayBuffers].map((bytes) =>
        Math.round(bytes / 1048576),
      ) as [number, number, number, number]),
    ]);
    if (usage.rss > peaks.rss) rssPeakAtMs = now();
    for (const key of Object.keys(peaks) as (keyof typeof peaks)[])
      peaks[key] = Math.max(peaks[key], usage[key]);
  };
  const timer = setInterval(sample, MEMORY_SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peaks: { ...peaks, rssPeakAtMs }, timeline };
    },
  };
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`driver child: ${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const mode = process.env.OMA_BENCH_CHILD_MODE || "idle";
  const argument = process.env.OMA_BENCH_CHILD_ARGUMENT ?? "";
  const resultFile = requiredEnv("OMA_BENCH_RESULT_FILE");
  const recorder = createStepRecorder();
  const store = instrumentStore(
    createFsBlobStore({ rootDir: requiredEnv("OMA_BENCH_STORE_DIR") }),
    recorder,
  );
  const spoolDirectory = process.env.OMA_BENCH_SPOOL_DIR;
  // The driver's own wiring and defaults, with the client and store observed.
  const resolved = resolveBridgeOptions({
    baseUrl: requiredEnv("OMA_BENCH_BRIDGE_URL"),
    apiKey: requiredEnv("OMA_BENCH_BRIDGE_API_KEY"),
    checkpointStore: store,
    ...(spoolDirectory ? { spoolDirectory } : {}),
  });
  const { provider } = createBridgeSandboxComponents(resolved, {
    wrapClient: (client) => instrumentClient(client, recorder),
  });
  const context = { sessionId: requiredEnv("OMA_BENCH_SESSION"), workdir: "/workspace" };
  const rssAtStartBytes = process.memoryUsage().rss;

  recorder.restart();
  const memory = sampleMemory(() => recorder.now());
  let output: Record<string, unknown> = {};
  if (mode === "checkpoint") {
    const runtime = await provider.connect(argument, context);
    const handle = await runtime.checkpoint({ kind: "filesystem", name: "bench" });
    output = { handle };
  } else if (mode === "restore") {
    const runtime = await provider.restore(
      JSON.parse(argument) as SandboxCheckpointHandle,
      context,
    );
    output = { runtimeId: runtime.runtimeHandle().runtimeId };
  } else if (mode !== "idle") {
    throw new Error(`driver child: unknown mode ${mode}`);
  }
  const elapsedMs = recorder.now();
  const { peaks: memoryPeaks, timeline } = memory.stop();
  const result = {
    mode,
    elapsedMs,
    steps: summarizeSpans(recorder.spans, elapsedMs),
    rssAtStartBytes,
    peakRssBytes: ownPeakRssBytes(),
    memoryPeaks,
    timeline,
    spans: recorder.spans.map(({ step, start, end }) => ({ step, start, end })),
    ...output,
  };
  writeFileSync(resultFile, JSON.stringify(result));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `driver child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
