import {
  type HarnessCheckpointRequest,
  InvalidRequestError,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { takeWorkspaceCheckpoint } from "./checkpoint-workspace.js";
import { collectAndFinalizeOutputs } from "./finalize-outputs.js";
import { publishUnderFence, rotateFence } from "./publish.js";
import { synchronizeSessionInputs } from "./session-inputs.js";
import { synchronizeMemoryStores } from "./synchronize-memory-stores.js";

/** Longest accepted checkpoint id; ids become part of stage names and idempotency keys. */
export const MAX_CHECKPOINT_ID_LENGTH = 200;

/** `context.stage` of a refusal: the request was turned down before any part of a commit ran. */
export const LIVE_CHECKPOINT_REFUSAL_STAGE = "live-checkpoint";

/** True for a refusal thrown by the live-checkpoint callback (`invalid_request`, nothing attempted). */
export function isLiveCheckpointRefusal(error: unknown): error is InvalidRequestError {
  return (
    ManagedRuntimeError.hasCode(error, "invalid_request") &&
    error.context.stage === LIVE_CHECKPOINT_REFUSAL_STAGE
  );
}

/** The harness's live-checkpoint callback for one run. */
export interface LiveCheckpoints {
  /** The `checkpoint` callback handed to the harness driver. */
  readonly commit: (request: HarnessCheckpointRequest) => Promise<void>;
  /** Refuses every later request (the harness run returned). */
  close(): void;
  /** Resolves once every accepted request has settled. */
  drain(): Promise<void>;
}

/**
 * Creates the live-checkpoint callback. A request is refused when its id is empty, too long or already
 * used in this run, when it names another session, or after the harness returned. Accepted requests
 * run one at a time: session-input sync, memory-store write-back, workspace checkpoint, output collect and finalize, publish,
 * then rotation to the next fence generation. A lost fence rejects the request and ends the run as `lease_lost`.
 */
export function createLiveCheckpoints(run: RunContext): LiveCheckpoints {
  const seen = new Set<string>();
  let open = true;
  let tail: Promise<void> = Promise.resolve();
  return {
    commit(request) {
      const refusal = validate(run, request, seen, open);
      if (refusal) {
        run.log.warn("live_checkpoint.refused", { reason: refusal.message });
        return Promise.reject(refusal);
      }
      seen.add(request.checkpointId);
      const done = tail.then(() => commit(run, request.checkpointId));
      tail = done.catch(() => undefined);
      return done;
    },
    close() {
      open = false;
    },
    drain: () => tail,
  };
}

async function commit(run: RunContext, checkpointId: string): Promise<void> {
  await synchronizeSessionInputs(run, `checkpoint-${checkpointId}`);
  await synchronizeMemoryStores(run, `checkpoint-${checkpointId}`);
  const workspaceCandidate = await takeWorkspaceCheckpoint(
    run,
    `workspace-checkpoint-${checkpointId}`,
  );
  const outputCandidate = await collectAndFinalizeOutputs(run, `-${checkpointId}`);
  const generation = run.requireFence().generation;
  const revision = await publishUnderFence(run, `fence-publish-${checkpointId}`, {
    workspaceCandidate,
    outputCandidate,
    runtimeCheckpoint: null,
  });
  run.log.info("live_checkpoint.published", { checkpointId, revision, generation });
  await rotateFence(run, `fence-rotate-${checkpointId}`);
}

function validate(
  run: RunContext,
  request: HarnessCheckpointRequest,
  seen: ReadonlySet<string>,
  open: boolean,
): InvalidRequestError | null {
  const id: unknown = request?.checkpointId;
  const reason = !open
    ? "the harness run has ended"
    : typeof id !== "string" || id.trim() === ""
      ? "checkpoint id is empty"
      : id.length > MAX_CHECKPOINT_ID_LENGTH
        ? `checkpoint id exceeds ${MAX_CHECKPOINT_ID_LENGTH} characters`
        : request.sessionId !== run.scope.sessionId
          ? "checkpoint names another session"
          : seen.has(id)
            ? "checkpoint id was already used in this run"
            : null;
  if (!reason) return null;
  return markHostError(
    new InvalidRequestError({
      message: `live checkpoint refused: ${reason}`,
      context: {
        stage: LIVE_CHECKPOINT_REFUSAL_STAGE,
        ...(typeof id === "string" && id.length <= MAX_CHECKPOINT_ID_LENGTH
          ? { checkpointId: id }
          : {}),
      },
    }),
  );
}
