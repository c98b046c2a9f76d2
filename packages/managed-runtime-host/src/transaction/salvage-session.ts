import {
  type RuntimeResourcePublication,
  type SandboxJournalPort,
  type SandboxJournalRecord,
  parseRecord,
  runtimePublicationCandidateSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { stageError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { reapAndConfirm } from "../reconciler/confirm-gone.js";
import { type ReconcilerSalvage, captureAbandoned } from "../reconciler/salvage-sandbox.js";
import { callPort, idempotencyKey, outcomeError } from "./port-call.js";
import { publishUnderFence, rotateFence } from "./publish.js";
import type { RunStep } from "./step.js";

const stage = "session-salvage";

/** Most journal records of the session one run reads; a session has one live run at a time. */
const SESSION_RECORD_LIMIT = 100;

/** What a run did with one salvageable record of its session (the reconciler's outcomes but `held`). */
type SessionSalvageOutcome =
  | { readonly type: "salvaged"; readonly revision: number; readonly generation: number }
  | { readonly type: "superseded" }
  | { readonly type: "failed"; readonly code: string; readonly message: string };

/**
 * Gives way to what a dead run of the session left before this run restores anything: right after the
 * fence is taken, every journal record of the session that is still marked salvageable (its `ama_worker`
 * harness started and its host never settled it) is salvaged under this run's fence, oldest first, exactly
 * as the reconciler would: the abandoned harness is ended, `/workspace` is checkpointed and published as the
 * session's next revision only while the session is still at the record's start revision; the fence then
 * rotates, so this run's own publish uses a generation that has not published. Holding the fence proves
 * the record's run no longer does. Whatever the outcome, the sandbox is reaped and the record resolved. A
 * salvage that fails (the sandbox is gone, the checkpoint is refused) publishes nothing and is logged as
 * `sandbox.salvage` with outcome `failed` at error level: the dead turn's files are lost, and this run goes
 * on from the last published revision.
 */
export const salvageSession: RunStep = {
  stage,
  applies: (run) => salvagePortsOf(run) !== null,
  async run(run) {
    const ports = salvagePortsOf(run);
    if (!ports) return;
    const records = await callPort(
      run,
      `${stage}-list`,
      () => ports.journal.listSession({ scope: run.scope, limit: SESSION_RECORD_LIMIT }),
      { unsignalled: true },
    );
    let index = 0;
    for (const record of records) {
      const { startRevision } = record;
      // A record the reconciler already tried is left to its reap; one never marked is only reaped.
      if (startRevision === null || record.attempts > 0) continue;
      index += 1;
      await salvageRecord(run, ports, { ...record, startRevision }, `${stage}-${index}`);
    }
  },
};

interface SalvagePorts {
  readonly journal: SandboxJournalPort;
  readonly salvage: ReconcilerSalvage;
}

/**
 * The host's own driver ports salvage: its harness port must end an abandoned harness, and the run's
 * workspace must be a portable checkpoint (`checkpoint_restore`) the next materialize restores.
 */
function salvagePortsOf(run: RunContext): SalvagePorts | null {
  const { journal, harnessDriver, workspace } = run.options;
  const endAbandoned = harnessDriver.endAbandoned?.bind(harnessDriver);
  if (!journal || !endAbandoned) return null;
  if (run.requireAdmission().plan.workspaceStrategy !== "checkpoint_restore") return null;
  return { journal, salvage: { endAbandoned, workspace } };
}

async function salvageRecord(
  run: RunContext,
  ports: SalvagePorts,
  record: SandboxJournalRecord & { readonly startRevision: number },
  recordStage: string,
): Promise<void> {
  // The fields of the reconciler's `reconciler.salvage` lines, and the work item whose run salvaged.
  const fields = {
    sessionId: record.scope.sessionId,
    workId: record.scope.workId,
    runtimeId: record.sandbox.runtimeId,
    startRevision: record.startRevision,
    salvagedBy: run.scope.workId,
  };
  const outcome = await salvageOrFail(run, ports, record, recordStage);
  if (outcome.type === "salvaged") {
    const { revision, generation } = outcome;
    run.log.info("sandbox.salvage", { ...fields, outcome: outcome.type, revision, generation });
  } else if (outcome.type === "superseded") {
    const currentRevision = run.publication?.revision ?? 0;
    run.log.info("sandbox.salvage", { ...fields, outcome: outcome.type, currentRevision });
  } else {
    // The dead turn's files are lost: the run goes on from the revision the session is at.
    run.log.error("sandbox.salvage", {
      ...fields,
      outcome: outcome.type,
      lost: true,
      currentRevision: run.publication?.revision ?? 0,
      code: outcome.code,
      message: outcome.message,
    });
  }
  await reapRecord(run, ports.journal, record, `${recordStage}-reap`);
}

async function salvageOrFail(
  run: RunContext,
  ports: SalvagePorts,
  record: SandboxJournalRecord & { readonly startRevision: number },
  recordStage: string,
): Promise<SessionSalvageOutcome> {
  // Revisions count publications of the session: any since the dead run started is newer and wins.
  if ((run.publication?.revision ?? 0) !== record.startRevision) return { type: "superseded" };
  const fence = run.requireFence();
  let candidate;
  try {
    candidate = await callPort(run, `${recordStage}-capture`, (signal) =>
      captureAbandoned(ports.salvage, {
        record,
        scope: run.scope,
        fence,
        idempotencyKey: idempotencyKey(run, recordStage),
        signal,
      }),
    );
  } catch (error) {
    const lost = outcomeError(run);
    if (lost) throw lost;
    const typed = stageError(error, `${recordStage}-capture`, run.secrets());
    return { type: "failed", code: typed.code, message: typed.message };
  }
  const previous = run.publication;
  const outputCandidate = previous?.outputCandidate ?? null;
  const revision = await publishUnderFence(
    run,
    `${recordStage}-publish`,
    // The dead turn's outputs were never collected: the session keeps the manifest it had.
    { workspaceCandidate: candidate, outputCandidate, runtimeCheckpoint: null },
    { expectedRevision: record.startRevision },
  );
  const published: RuntimeResourcePublication = {
    generation: fence.generation,
    revision,
    workspaceCandidate: parseRecord(runtimePublicationCandidateSchema, candidate, {
      record: "salvaged workspace checkpoint",
    }),
    outputCandidate,
    runtimeCheckpoint: null,
  };
  run.publication = published;
  await rotateFence(run, `${recordStage}-rotate`);
  return { type: "salvaged", revision, generation: fence.generation };
}

/** Reaps the dead run's sandbox and resolves its record; a failed reap is left to the reconciler. */
async function reapRecord(
  run: RunContext,
  journal: SandboxJournalPort,
  record: SandboxJournalRecord,
  reapStage: string,
): Promise<void> {
  try {
    await callPort(
      run,
      reapStage,
      async () => {
        await reapAndConfirm(run.options.sandbox, {
          scope: record.scope,
          lease: record.sandbox,
          reason: "lease_lost",
        });
        await journal.resolve({ id: record.id });
      },
      { unsignalled: true },
    );
  } catch (error) {
    const lost = outcomeError(run);
    if (lost) throw lost;
    const typed = stageError(error, reapStage, run.secrets());
    run.log.warn("sandbox.salvage_reap_failed", {
      runtimeId: record.sandbox.runtimeId,
      code: typed.code,
      message: typed.message,
    });
    // Counted as an attempt: the reconciler reaps it with backoff and never salvages it again.
    await callPort(run, `${reapStage}-failed`, () =>
      journal.failed({ id: record.id, error: `${typed.code}: ${typed.message}` }),
    ).catch(() => undefined);
  }
}
