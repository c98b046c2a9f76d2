import {
  type ManagedSandboxPort,
  type RuntimeResourceScope,
  type UsageRecord,
  type UsageRecorderPort,
  activeSeconds,
} from "@open-managed-agents/runtime-resource-contract";
import { CLOUDFLARE_PROVIDER } from "../provider-id.js";

/** Most containers whose start one driver instance remembers; the oldest is forgotten (and emits nothing) beyond it. */
export const MAX_TRACKED_CONTAINERS = 10_000;

/** Resolved usage settings of the Cloudflare driver. */
export interface CloudflareUsageSettings {
  readonly recorder: UsageRecorderPort;
  readonly instanceType: string | null;
  /** Longest teardown waits for the recorder before it moves on. */
  readonly recordTimeoutMs: number;
  /** Keeps a record alive past the response (`ctx.waitUntil`), when the Worker supplies it. */
  readonly waitUntil: ((promise: Promise<unknown>) => void) | null;
  readonly now: () => number;
}

/**
 * Records each container's start (when acquire was asked for it; the platform bills from the start) and
 * stop (a successful terminate or reap), and emits `sandbox_active_seconds` for the span. Only spans this
 * instance saw from both ends are emitted: a container reaped by another process emits nothing.
 * Emitting is best-effort: a recorder that throws is ignored and one that hangs is waited for at most
 * `recordTimeoutMs`; teardown's own result never changes.
 */
export function withUsageRecording(
  sandbox: ManagedSandboxPort,
  settings: CloudflareUsageSettings,
): ManagedSandboxPort {
  const started = new Map<string, { readonly scope: RuntimeResourceScope; readonly at: number }>();

  const stopped = async (runtimeId: string): Promise<void> => {
    const start = started.get(runtimeId);
    if (!start) return;
    started.delete(runtimeId);
    const stoppedAt = settings.now();
    const record: UsageRecord = {
      kind: "sandbox_active_seconds",
      value: activeSeconds(start.at, stoppedAt),
      provider: CLOUDFLARE_PROVIDER,
      runtimeId,
      scope: start.scope,
      instanceType: settings.instanceType,
      startedAt: new Date(start.at).toISOString(),
      stoppedAt: new Date(stoppedAt).toISOString(),
    };
    const emitted = Promise.resolve()
      .then(() => settings.recorder.record(record))
      .catch(() => undefined);
    settings.waitUntil?.(emitted);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, settings.recordTimeoutMs);
    });
    await Promise.race([emitted, gaveUp]);
    if (timer !== undefined) clearTimeout(timer);
  };

  return {
    ...sandbox,
    async acquire(input) {
      const at = settings.now();
      const lease = await sandbox.acquire(input);
      if (started.size >= MAX_TRACKED_CONTAINERS)
        started.delete(started.keys().next().value as string);
      started.set(lease.runtimeId, { scope: input.scope, at });
      return lease;
    },
    async terminate(input) {
      // A failed terminate leaves the container running: its start stays, for the reap that follows.
      await sandbox.terminate(input);
      await stopped(input.lease.runtimeId);
    },
    async reap(input) {
      await sandbox.reap(input);
      await stopped(input.lease.runtimeId);
    },
  };
}
