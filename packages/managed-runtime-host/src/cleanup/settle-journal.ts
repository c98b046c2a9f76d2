import type { ManagedSandboxLease } from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { sameRuntime } from "../transaction/check-lease.js";
import { unmarkSalvageable } from "../transaction/sandbox-journal.js";
import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { cleanupReason } from "./cleanup-reason.js";

const stage = "sandbox-journal-settle";

/**
 * Settles the run's journal records after terminate. The lease's record goes once its terminate was
 * confirmed or a retained runtime was published; a record of a runtime that never became the lease (a
 * failed acquire or restore left it) is reaped token-free and goes once the provider reports it stopped.
 * Everything else stays journaled for the reconciler, which reaps it once this generation is not current; the
 * lease's record loses its salvage mark first, since this host settled the run itself.
 */
export const settleJournal: RunStep = {
  stage,
  applies: (run) => run.options.journal !== undefined && run.journaled.length > 0,
  async run(run) {
    for (const { id, sandbox } of run.journaled) {
      const isLease = run.lease !== null && sameRuntime(run.lease, sandbox);
      if (isLease) {
        if (run.terminated || (run.retained && run.finalPublish)) await resolve(run, id, sandbox);
        else await unmarkSalvageable(run, id, stage);
        continue;
      }
      if (await reapStray(run, sandbox)) await resolve(run, id, sandbox);
    }
  },
};

/** Reaps a runtime the run started but never held; true once the provider reports it stopped. */
async function reapStray(run: RunContext, entry: ManagedSandboxLease): Promise<boolean> {
  const { sandbox } = run.options;
  const reaped = await cleanupCall(run, "sandbox-journal-reap", () =>
    sandbox.reap({ scope: run.scope, lease: entry, reason: cleanupReason(run) }),
  );
  if (!reaped.ok) return false;
  const observed = await cleanupCall(run, "sandbox-journal-inspect", () => sandbox.inspect(entry));
  const gone = observed.ok && observed.value.state === "stopped";
  run.log[gone ? "info" : "warn"]("sandbox.stray_reaped", {
    provider: entry.provider,
    runtimeId: entry.runtimeId,
    confirmed: gone,
  });
  return gone;
}

async function resolve(run: RunContext, id: string, entry: ManagedSandboxLease): Promise<void> {
  const journal = run.options.journal;
  if (!journal) return;
  const settled = await cleanupCall(run, stage, () => journal.resolve({ id }));
  if (settled.ok)
    run.log.info("sandbox.journal_resolved", {
      provider: entry.provider,
      runtimeId: entry.runtimeId,
    });
}
