import type { ChildResult } from "./child-protocol.js";
import type { HostTarReference } from "./host-tar.js";
import type { PersistAttempt, RawTransfers } from "./raw-bridge.js";
import type { WorkspacePlan } from "./workspace-generator.js";

const MIB = 1024 * 1024;
/** Throughput target of driver checkpoint and restore against the raw bridge figure, random bytes. */
export const RATIO_TARGET = 0.8;
/** The same target for the compressible, source-like workspace. */
export const COMPRESSIBLE_RATIO_TARGET = 2.5;
/** The second checkpoint, after 1% of the files changed, against the full one. */
export const SECOND_CHECKPOINT_TARGET = 0.1;
/** Peak RSS target of the driver process. */
export const RSS_TARGET_BYTES = 128 * MIB;

/** One-minute load average at the start and end of a phase, by phase name. */
export type LoadWindows = Record<string, [number, number]>;

/** Everything one run measured. */
export interface BenchFigures {
  readonly plan: WorkspacePlan;
  readonly workspaceBytes: number;
  readonly archiveBytes: number;
  readonly entries: number;
  readonly changedFiles: number;
  readonly verified: boolean;
  readonly idle: ChildResult;
  readonly checkpoint: ChildResult;
  readonly secondCheckpoint: ChildResult;
  readonly restore: ChildResult;
  /** The same restore once more, after {@link restore}. */
  readonly restoreAgain: ChildResult;
  readonly rawGets: RawTransfers & { archiveMs: number };
  readonly rawHydrates: RawTransfers;
  readonly persist: PersistAttempt | null;
  readonly hostTar: HostTarReference | null;
  readonly loads: LoadWindows;
  readonly totalSeconds: number;
  /** Where the sandboxes' trees, the store and the spools lived. */
  readonly scratch: string;
  /** Whether the report prints each phase's memory timeline. */
  readonly memoryTimeline?: boolean;
}

const mbps = (bytes: number, seconds: number) => (seconds > 0 ? bytes / 1e6 / seconds : 0);
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
const pad = (value: string, width: number) => value.padEnd(width);
const left = (value: string, width: number) => value.padStart(width);

function row(label: string, bytes: number | null, seconds: number | null, note = ""): string {
  const rate = bytes !== null && seconds !== null ? mbps(bytes, seconds).toFixed(1) : "—";
  return `  ${pad(label, 50)}${left(bytes === null ? "—" : String(bytes), 12)}${left(seconds === null ? "—" : seconds.toFixed(2), 9)}${left(rate, 9)}  ${note}`;
}

function stepTable(title: string, result: ChildResult): string[] {
  const lines = [`${title} (${(result.elapsedMs / 1000).toFixed(2)} s):`];
  for (const step of [...result.steps].sort((a, b) => b.ms - a.ms)) {
    const share = ((step.ms / result.elapsedMs) * 100).toFixed(1);
    const bytes =
      step.bytes > 0
        ? `  ${mbps(step.bytes, step.ms / 1000).toFixed(1)} MB/s over ${mib(step.bytes)}`
        : "";
    lines.push(
      `  ${pad(step.step, 52)}${left((step.ms / 1000).toFixed(2), 8)} s ${left(share, 5)}%  ×${step.count}${bytes}`,
    );
  }
  return lines;
}

const load = (loads: LoadWindows, phase: string) => {
  const window = loads[phase];
  return window ? `load ${window[0].toFixed(1)}→${window[1].toFixed(1)}` : "";
};

const verdict = (ok: boolean) => (ok ? "meets target" : "MISSES target");

/** Formats the figures of one run as plain text. */
export function formatReport(figures: BenchFigures): string {
  const { plan, archiveBytes } = figures;
  const checkpointSeconds = figures.checkpoint.elapsedMs / 1000;
  const secondSeconds = figures.secondCheckpoint.elapsedMs / 1000;
  const restoreSeconds = figures.restore.elapsedMs / 1000;
  const againSeconds = figures.restoreAgain.elapsedMs / 1000;
  // Rates over the workspace's uncompressed tar bytes, the same bytes the raw figures move.
  const checkpointRatio =
    mbps(archiveBytes, checkpointSeconds) / mbps(figures.rawGets.bytes, figures.rawGets.seconds);
  const restoreRatio =
    mbps(archiveBytes, restoreSeconds) /
    mbps(figures.rawHydrates.bytes, figures.rawHydrates.seconds);
  const secondRatio = secondSeconds / checkpointSeconds;
  const target = plan.kind === "source" ? COMPRESSIBLE_RATIO_TARGET : RATIO_TARGET;
  const persist = figures.persist;
  const lines = [
    "",
    `Cloudflare Sandbox Bridge driver benchmark: local bridge Worker (workerd) over local containers, fs blob store; files under ${figures.scratch}`,
    `${plan.kind} workspace ${mib(plan.totalBytes)} generated in the sandbox: ${plan.smallFiles} small files, ${plan.mediumFiles} files of 1–6 MiB, ${plan.largeFiles} files of up to 48 MiB;`,
    `  du ${figures.workspaceBytes} bytes, ${figures.entries} entries, checkpoint archive ${archiveBytes} bytes (MB = 10^6 bytes)`,
    "",
    `  ${pad("transfer", 50)}${left("bytes", 12)}${left("s", 9)}${left("MB/s", 9)}`,
    row(
      "driver checkpoint (runtime.checkpoint, full)",
      archiveBytes,
      checkpointSeconds,
      load(figures.loads, "driver checkpoint"),
    ),
    row(
      `driver second checkpoint (${figures.changedFiles} files changed)`,
      archiveBytes,
      secondSeconds,
      load(figures.loads, "driver second checkpoint"),
    ),
    row(
      `raw bridge: curl file GET of ${figures.rawGets.requests} 8 MiB parts`,
      figures.rawGets.bytes,
      figures.rawGets.seconds,
      `${load(figures.loads, "raw GET")} ${failures(figures.rawGets)}`,
    ),
    row("  (reference: in-sandbox tar | split, via exec)", null, figures.rawGets.archiveMs / 1000),
    row(
      "driver restore (provider.restore, fresh sandbox)",
      archiveBytes,
      restoreSeconds,
      `${load(figures.loads, "driver restore")} ${figures.verified ? "trees verified" : "TREE DIFFERS"}`,
    ),
    row(
      "driver restore, again",
      archiveBytes,
      againSeconds,
      load(figures.loads, "driver restore, again"),
    ),
    row(
      `raw bridge: curl /hydrate of ${figures.rawHydrates.requests} 8 MiB tar parts`,
      figures.rawHydrates.bytes,
      figures.rawHydrates.seconds,
      `${load(figures.loads, "raw hydrate")} ${failures(figures.rawHydrates)}`,
    ),
    persist === null
      ? row("raw bridge: single /persist", null, null, "skipped")
      : row(
          "raw bridge: single /persist",
          persist.bytes,
          persist.seconds,
          persist.survived ? "survived" : `did not survive: ${persist.detail}`,
        ),
    ...(figures.hostTar
      ? [
          row(
            "GNU tar -cf - | cat > /dev/null (host)",
            figures.hostTar.archiveBytes,
            figures.hostTar.createSeconds,
          ),
          row("GNU tar -xf (host)", figures.hostTar.archiveBytes, figures.hostTar.extractSeconds),
        ]
      : [row("GNU tar (host)", null, null, "not measured (see the log)")]),
    "",
    `ratios (target ≥ ${target.toFixed(2)} of the raw bridge figure for the ${plan.kind} workspace):`,
    `  checkpoint: driver ${mbps(archiveBytes, checkpointSeconds).toFixed(1)} MB/s / raw GET ${mbps(figures.rawGets.bytes, figures.rawGets.seconds).toFixed(1)} MB/s = ${checkpointRatio.toFixed(2)}  ${verdict(checkpointRatio >= target)}`,
    `  restore:    driver ${mbps(archiveBytes, restoreSeconds).toFixed(1)} MB/s / raw hydrate ${mbps(figures.rawHydrates.bytes, figures.rawHydrates.seconds).toFixed(1)} MB/s = ${restoreRatio.toFixed(2)}  ${verdict(restoreRatio >= target)}`,
    `  second checkpoint / full checkpoint = ${secondRatio.toFixed(3)} (target ≤ ${SECOND_CHECKPOINT_TARGET})  ${verdict(secondRatio <= SECOND_CHECKPOINT_TARGET)}`,
    ...(persist?.survived
      ? [
          `  for reference, driver checkpoint / single /persist = ${(mbps(archiveBytes, checkpointSeconds) / mbps(persist.bytes, persist.seconds)).toFixed(2)}`,
        ]
      : []),
    "  (raw figures: half the parts before the driver's run, half after; sums of curl's time_total;",
    "   load: one-minute load average of the shared host at the start → end of a run; for raw figures, of their first half)",
    "",
    `driver process peak RSS (target ≤ ${mib(RSS_TARGET_BYTES)}):`,
    `  idle (modules loaded, driver built): ${mib(figures.idle.peakRssBytes)}`,
    `  checkpoint: ${mib(figures.checkpoint.peakRssBytes)}  ${verdict(figures.checkpoint.peakRssBytes <= RSS_TARGET_BYTES)}`,
    `  second checkpoint: ${mib(figures.secondCheckpoint.peakRssBytes)}  ${verdict(figures.secondCheckpoint.peakRssBytes <= RSS_TARGET_BYTES)}`,
    `  restore:    ${mib(figures.restore.peakRssBytes)}  ${verdict(figures.restore.peakRssBytes <= RSS_TARGET_BYTES)}`,
    "  sampled peaks (each its own maximum; heap / external / arrayBuffers; steps running at the RSS peak):",
    ...(["checkpoint", "secondCheckpoint", "restore"] as const).map(
      (phase) => `    ${phase}: ${memoryLine(figures[phase])}`,
    ),
    ...(figures.memoryTimeline
      ? (["checkpoint", "secondCheckpoint", "restore"] as const).flatMap((phase) =>
          timelineLines(phase, figures[phase]),
        )
      : []),
    "",
    ...stepTable("driver checkpoint steps", figures.checkpoint),
    "",
    ...stepTable("driver second checkpoint steps", figures.secondCheckpoint),
    "",
    ...stepTable("driver restore steps", figures.restore),
    "",
    `total bench time ${figures.totalSeconds.toFixed(0)} s`,
  ];
  return lines.join("\n");
}

function memoryLine(result: ChildResult): string {
  const { memoryPeaks: peaks } = result;
  const running = new Set(
    (result.spans ?? [])
      .filter((span) => span.start <= peaks.rssPeakAtMs && span.end >= peaks.rssPeakAtMs)
      .map((span) => span.step),
  );
  return `rss ${mib(peaks.rss)}, heap used ${mib(peaks.heapUsed)} of ${mib(peaks.heapTotal)}, external ${mib(peaks.external)}, arrayBuffers ${mib(peaks.arrayBuffers)}; at ${(peaks.rssPeakAtMs / 1000).toFixed(1)} s: ${[...running].join(", ") || "no store or bridge call"}`;
}

/** Lines printed per phase's memory timeline, at most. */
const TIMELINE_LINES = 40;

/** Samples printed on each side of the one with the most RSS, whatever the spacing elsewhere. */
const AROUND_PEAK = 3;

/**
 * A phase's memory over time (OMA_BENCH_MEMORY_TIMELINE=1): where heap and buffers grew, and with which
 * steps. Evenly spaced samples, plus every sample near the RSS peak (marked `*`), so a short spike shows.
 */
function timelineLines(phase: string, result: ChildResult): string[] {
  const samples = result.timeline ?? [];
  const every = Math.max(1, Math.ceil(samples.length / TIMELINE_LINES));
  const peak = samples.reduce(
    (best, sample, index) => (sample[1] > (samples[best]?.[1] ?? -1) ? index : best),
    0,
  );
  const lines = [
    `  ${phase} memory timeline (ms: rss / heap total / heap used / arrayBuffers MiB; steps running):`,
  ];
  for (const [index, [ms, rss, heapTotal, heapUsed, arrayBuffers]] of samples.entries()) {
    const near = Math.abs(index - peak) <= AROUND_PEAK;
    if (index % every !== 0 && index !== samples.length - 1 && !near) continue;
    const running = new Set(
      (result.spans ?? [])
        .filter((span) => span.start <= ms && span.end >= ms)
        .map((span) => span.step),
    );
    lines.push(
      `  ${index === peak ? "*" : " "} ${left(String(ms), 6)}: ${rss} / ${heapTotal} / ${heapUsed} / ${arrayBuffers}  ${[...running].join(", ")}`,
    );
  }
  return lines;
}

function failures(transfers: RawTransfers): string {
  return transfers.failures.length === 0
    ? ""
    : `${transfers.failures.length} failed: ${transfers.failures[0]}`;
}
