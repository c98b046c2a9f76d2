import type { BlobStore } from "@open-managed-agents/blob-store";
import { readOutputManifest } from "@open-managed-agents/managed-runtime-sandbox";
import type { RuntimePublicationCandidate } from "@open-managed-agents/runtime-resource-contract";
import { formatBytes, formatDuration, say } from "./format.js";
import type { ServiceLine } from "./service-process.js";

/** One finished work item, as the service's `work.done` line reports it. */
export interface ItemDone {
  readonly workId: string;
  readonly sessionId: string | null;
  readonly outcome: string;
}

/**
 * Prints the service's log lines as the demo's readable account: each item's header, every transaction
 * step with its duration (the service's debug `transaction.step` lines), checkpoint and restore progress,
 * the published revision, the output manifest read back from the store, and each item's outcome. Lines are
 * printed in the order the service wrote them, reading a manifest included.
 */
export function createServiceLogPrinter(options: {
  readonly outputStore: BlobStore;
  readonly onItemDone: (item: ItemDone) => void;
}) {
  let sdkVersion = "?";
  let itemStarted = 0;
  let queue = Promise.resolve();
  const print = async (line: ServiceLine): Promise<void> => {
    const field = (name: string) => String(line[name]);
    const phase = String(line.event).split(".")[0];
    const entries = () => (typeof line.entries === "number" ? `, ${line.entries} entries` : "");
    const moved = () =>
      `${formatBytes(Number(line.bytes))} in ${field("objects")} objects${entries()}`;
    switch (line.event) {
      case "service.started":
        sdkVersion = field("sdkVersion");
        say(`  fences   ${field("store")}`);
        say(
          `  service  started: driver ${field("driver")}, concurrency ${field("concurrency")}, @anthropic-ai/sdk ${sdkVersion}`,
        );
        return;
      case "run.started":
        itemStarted = performance.now();
        say();
        say(
          `work item ${field("workId")} of ${field("sessionId")} (claimed by oma-environment-worker with the SDK's ` +
            `WorkPoller, @anthropic-ai/sdk ${sdkVersion})`,
        );
        return;
      case "transaction.step":
        return printStep(line, options.outputStore);
      case "checkpoint.transfer":
      case "restore.transfer":
        say(`      ${phase} transfer ${moved()}`);
        return;
      case "checkpoint.progress":
      case "restore.progress":
        say(
          `      ${phase} running ${(Number(line.elapsedMs) / 1000).toFixed(0)} s, ${moved()} so far`,
        );
        return;
      case "checkpoint.done":
      case "restore.done":
        say(`      ${phase} done: ${moved()}, ${field("durationMs")} ms`);
        return;
      case "fence.published":
        say(`  publish  session revision ${field("revision")}, generation ${field("generation")}`);
        return;
      case "work.done": {
        const seconds = itemStarted
          ? ` in ${((performance.now() - itemStarted) / 1000).toFixed(1)} s`
          : "";
        const detail = line.code ? ` (${field("code")}: ${field("message")})` : "";
        say(`  result   ${field("outcome")}${seconds}${detail}`);
        options.onItemDone({
          workId: field("workId"),
          sessionId: typeof line.sessionId === "string" ? line.sessionId : null,
          outcome: field("outcome"),
        });
        return;
      }
      case "service.stopping":
        say();
        say(`service stopping on ${field("signal")}: no more claims, running items finish first`);
        return;
      case "service.stopped":
        say("service stopped");
        return;
      default:
        // Warnings and errors always show; other info lines (claims, polls, fences) are in the steps above.
        if (line.level >= 40)
          say(
            `  ${line.level >= 50 ? "error" : "warn "}   ${String(line.event)} ${describe(line)}`,
          );
    }
  };
  return {
    /** The service child's `onLine`. */
    line(line: ServiceLine): void {
      queue = queue
        .then(() => print(line))
        .catch((error: unknown) =>
          say(`  (could not print ${String(line.event)}: ${String(error)})`),
        );
    },
    /** Resolves once every line so far is printed. */
    flushed: () => queue,
  };
}

async function printStep(line: ServiceLine, outputStore: BlobStore): Promise<void> {
  const call = `${String(line.port)}.${String(line.call)}`;
  const failed = line.result === "ok" ? "" : `  failed: ${String(line.result)}`;
  say(`  ${call.padEnd(28)}${formatDuration(Number(line.durationMs))}${failed}`);
  if (typeof line.harness === "string") {
    say(`      worker  ${line.harness} (the lease's record of the bin the sandbox runs)`);
  }
  const checkpoint = line.checkpoint as
    | { id?: string; archive?: string; size?: number }
    | undefined;
  if (checkpoint?.id) {
    const size = checkpoint.size ? ` (${formatBytes(checkpoint.size)})` : "";
    say(`  checkpoint ${checkpoint.id}: archive ${checkpoint.archive ?? "?"}${size}`);
  }
  const manifest = line.manifest as RuntimePublicationCandidate | undefined;
  if (manifest?.id) {
    const read = await readOutputManifest(outputStore, manifest);
    say(`  outputs  manifest ${manifest.id} with ${read.entries.length} entries`);
    for (const entry of read.entries) {
      say(
        `           ${entry.logicalPath.padEnd(20)} ${formatBytes(entry.size).padStart(10)}  ${entry.contentHash}`,
      );
    }
  }
}

function describe(line: ServiceLine): string {
  const { level: _level, time: _time, event: _event, msg: _msg, ...fields } = line;
  return JSON.stringify(fields);
}
