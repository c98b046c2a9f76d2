import type { HostLogger } from "@open-managed-agents/managed-runtime-host";
import {
  CHECKPOINT_METADATA_KEY,
  HARNESS_VERSION_METADATA_KEY,
} from "@open-managed-agents/managed-runtime-sandbox";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { ServiceMetrics } from "./metrics.js";
import type { TransferProgress } from "./transfer-progress.js";

/** Calls made every few seconds; timing them would drown the histogram. */
const UNTIMED = new Set([
  "capabilities",
  "driverCapabilities",
  "heartbeat",
  "renew",
  "isCurrent",
  "isGenerationCurrent",
  "inspect",
]);
/**
 * Calls that may move a checkpoint, by the phase their progress reports. A sandbox driver restores the
 * workspace in `acquire` (the bridge does), another may in `materialize`; a call that moved nothing (a fresh
 * sandbox, a binding check) is not counted as a transfer.
 */
const TRANSFERS: Readonly<Record<string, "checkpoint" | "restore">> = {
  "workspace.checkpoint": "checkpoint",
  "workspace.materialize": "restore",
  "sandbox.acquire": "restore",
};
const VERIFICATION_CODES = new Set(["integrity_failed", "archive_rejected"]);

export interface InstrumentContext {
  readonly metrics: ServiceMetrics;
  /** With `debug`, every timed call is also a `transaction.step` line. */
  readonly logger: HostLogger & { debug?(event: string, fields: Record<string, unknown>): void };
  readonly progress: TransferProgress;
  /** Period of the "still running" line of a long checkpoint or restore. */
  readonly progressIntervalMs: number;
}

/**
 * Wraps every method of a host port so each call is timed into `oma_transaction_step_duration_seconds`
 * and logged at debug as a `transaction.step` line; workspace checkpoints and restores also count their
 * bytes and duration, and log their progress while they run. Arguments and results are never logged (they
 * may carry the fence token), only the token-free records a step produced (see `stepDetail`).
 */
export function instrumentPort<T extends object>(
  port: string,
  target: T,
  context: InstrumentContext,
): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        const result = (value as (...input: unknown[]) => unknown).apply(object, args);
        if (UNTIMED.has(property) || !(result instanceof Promise)) return result;
        return observe(port, property, result, args[0], context);
      };
    },
  });
}

async function observe(
  port: string,
  call: string,
  pending: Promise<unknown>,
  input: unknown,
  context: InstrumentContext,
): Promise<unknown> {
  const started = performance.now();
  const phase = TRANSFERS[`${port}.${call}`];
  const sessionId = sessionOf(input);
  const transfer = phase ? context.progress.begin(phase, sessionId) : null;
  const ticker = transfer
    ? setInterval(() => {
        context.logger.info(`${phase}.progress`, {
          sessionId,
          ...transfer.snapshot(),
          elapsedMs: Math.round(performance.now() - started),
        });
      }, context.progressIntervalMs)
    : null;
  ticker?.unref();
  try {
    const result = await pending;
    const seconds = (performance.now() - started) / 1000;
    context.metrics.stepDuration.observe({ port, call, result: "ok" }, seconds);
    context.logger.debug?.("transaction.step", {
      sessionId,
      port,
      call,
      result: "ok",
      durationMs: Math.round(seconds * 1000),
      ...stepDetail(port, call, result),
    });
    if (port === "sandbox" && call === "acquire") context.metrics.sandboxesAlive.inc();
    if (port === "sandbox" && call === "terminate") context.metrics.sandboxesAlive.dec();
    const moved = transfer?.snapshot();
    const movedAny = moved && (moved.objects > 0 || moved.bytes > 0 || (moved.entries ?? 0) > 0);
    if (phase && moved && (phase === "checkpoint" || movedAny)) {
      const { bytes, objects, entries } = moved;
      context.metrics.transferBytes.inc({ phase }, bytes);
      if (entries !== undefined) context.metrics.transferEntries.inc({ phase }, entries);
      context.metrics.transferDuration.observe({ phase, result: "ok" }, seconds);
      const archive = phase === "checkpoint" ? checkpointSize(result) : 0;
      context.logger.info(`${phase}.done`, {
        sessionId,
        bytes,
        objects,
        ...(entries === undefined ? {} : { entries }),
        ...(archive ? { handleSize: archive } : {}),
        durationMs: Math.round(seconds * 1000),
      });
    }
    return result;
  } catch (error) {
    const code = ManagedRuntimeError.isInstance(error) ? error.code : "error";
    const seconds = (performance.now() - started) / 1000;
    context.metrics.stepDuration.observe({ port, call, result: code }, seconds);
    context.logger.debug?.("transaction.step", {
      sessionId,
      port,
      call,
      result: code,
      durationMs: Math.round(seconds * 1000),
    });
    if (phase) {
      context.metrics.transferDuration.observe({ phase, result: code }, seconds);
      if (VERIFICATION_CODES.has(code)) context.metrics.verificationFailures.inc({ phase });
    }
    throw error;
  } finally {
    if (ticker) clearInterval(ticker);
    transfer?.end();
  }
}

function sessionOf(input: unknown): string | null {
  const scope = (input as { scope?: { sessionId?: unknown } } | undefined)?.scope;
  return typeof scope?.sessionId === "string" ? scope.sessionId : null;
}

type Metadata = { metadata?: Record<string, unknown> } | null;

/**
 * What a step's result records that an operator reads, all token-free: the harness version a sandbox's
 * lease names, the checkpoint a candidate holds (its archive and size), an output manifest's candidate.
 */
function stepDetail(port: string, call: string, result: unknown): Record<string, unknown> {
  const metadata = (result as Metadata)?.metadata;
  if (port === "sandbox" && call === "acquire") {
    const harness = metadata?.[HARNESS_VERSION_METADATA_KEY];
    return typeof harness === "string" ? { harness } : {};
  }
  if (port === "workspace" && call === "checkpoint") {
    const handle = checkpointHandle(result);
    // A handle records an archive size only where the driver's checkpoint is one archive.
    const size = checkpointSize(result);
    return {
      checkpoint: {
        id: (result as { id?: unknown } | null)?.id ?? null,
        archive: handle?.checkpointId ?? null,
        ...(size ? { size } : {}),
      },
    };
  }
  if (port === "outputs" && call === "finalize" && result && typeof result === "object") {
    const { id, contentHash, entries } = result as Record<string, unknown>;
    return { manifest: { id, contentHash, entries, metadata: metadata ?? {} } };
  }
  return {};
}

function checkpointHandle(
  candidate: unknown,
): { checkpointId?: string; metadata?: { size?: unknown } } | null {
  const handleJson = (candidate as Metadata)?.metadata?.[CHECKPOINT_METADATA_KEY];
  if (typeof handleJson !== "string") return null;
  try {
    return JSON.parse(handleJson) as { checkpointId?: string; metadata?: { size?: unknown } };
  } catch {
    return null;
  }
}

/** The archive size a checkpoint candidate's handle records, when the driver records one. */
function checkpointSize(candidate: unknown): number {
  const size = checkpointHandle(candidate)?.metadata?.size;
  return typeof size === "number" && Number.isSafeInteger(size) ? size : 0;
}
