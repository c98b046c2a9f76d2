import {
  type ManagedSandboxPort,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";

/** The sandbox methods the reconciler uses: `reap`, and `inspect` to confirm a reap. */
export type ReconcilerSandbox = Pick<ManagedSandboxPort, "reap"> &
  Partial<Pick<ManagedSandboxPort, "inspect">>;

/**
 * Reaps a lease and confirms it is gone: when the port can inspect, a runtime it still reports `running`
 * or `suspended` after the reap is not gone, and the reap throws `sandbox_failed` so the record stays, with backoff.
 * `stopped` and `unknown` (the provider cannot tell without waking it) count as gone.
 */
export async function reapAndConfirm(
  sandbox: ReconcilerSandbox,
  input: Parameters<ManagedSandboxPort["reap"]>[0],
): Promise<void> {
  await sandbox.reap(input);
  if (!sandbox.inspect) return;
  const { state } = await sandbox.inspect(input.lease);
  if (state === "running" || state === "suspended") {
    throw new SandboxFailedError({
      message: `reap unconfirmed: the provider still reports runtime ${input.lease.runtimeId} ${state} after the delete`,
      context: { runtimeId: input.lease.runtimeId, state, unconfirmed: true },
    });
  }
}
