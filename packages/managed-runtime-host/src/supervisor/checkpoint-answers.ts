import {
  type HarnessRunInput,
  type HarnessSupervisorChannel,
  type HarnessSupervisorEvent,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { isLiveCheckpointRefusal } from "../transaction/live-checkpoint.js";

/** Longest `checkpoint.reject` message sent to the supervisor. */
const MAX_REJECT_MESSAGE = 1000;

/** Answers the supervisor's `checkpoint` events one after another while its other events keep being read. */
export interface CheckpointAnswers {
  /** Queues the commit of one checkpoint event. */
  answer(event: Extract<HarnessSupervisorEvent, { type: "checkpoint" }>): void;
  /** Resolves once every queued commit settled; rejects with the first commit error. */
  settled(): Promise<void>;
  /** Fires when a commit fails. */
  readonly failed: AbortSignal;
  /** The first commit error, if any. */
  error(): unknown;
}

/**
 * A checkpoint the host refuses before doing anything (a reused id, another session, the harness run
 * ended: `invalid_request` with stage `live-checkpoint`), or one sent while live checkpoints are
 * disabled, is answered with `checkpoint.reject` and the run goes on. A commit that fails once started
 * is answered with `checkpoint.reject` too (naming the error's code, never an untyped error's text), and
 * then fails the run, which sends `stop{failed}`: the supervisor learns its checkpoint's fate before it is
 * stopped, and a harness can never finish believing an unpublished checkpoint is its state.
 */
export function createCheckpointAnswers(
  input: HarnessRunInput,
  channel: HarnessSupervisorChannel,
): CheckpointAnswers {
  const failure = new AbortController();
  let first: { readonly error: unknown } | null = null;
  let tail: Promise<void> = Promise.resolve();
  return {
    answer(event) {
      tail = tail.then(async () => {
        if (first) return;
        try {
          await commit(input, channel, event);
        } catch (error) {
          first ??= { error };
          failure.abort(error);
        }
      });
    },
    async settled() {
      await tail;
      if (first) throw first.error;
    },
    failed: failure.signal,
    error: () => first?.error,
  };
}

async function commit(
  input: HarnessRunInput,
  channel: HarnessSupervisorChannel,
  event: Extract<HarnessSupervisorEvent, { type: "checkpoint" }>,
): Promise<void> {
  const { checkpointId } = event;
  if (!input.checkpoint)
    return reject(channel, checkpointId, "live checkpoints are not enabled for this run");
  try {
    await input.checkpoint({
      checkpointId,
      sessionId: event.sessionId,
      ...(event.turnId === undefined ? {} : { turnId: event.turnId }),
    });
  } catch (error) {
    if (isLiveCheckpointRefusal(error)) return reject(channel, checkpointId, error.message);
    await reject(channel, checkpointId, failureMessage(error));
    throw error;
  }
  await channel.send({ type: "checkpoint.commit", checkpointId }).catch(() => undefined);
}

/** What a failed commit tells the supervisor: a typed error's code and message, nothing of any other error. */
function failureMessage(error: unknown): string {
  const detail = ManagedRuntimeError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : "internal";
  return `the checkpoint was not committed (${detail}); the run is failing`;
}

function reject(
  channel: HarnessSupervisorChannel,
  checkpointId: string,
  message: string,
): Promise<void> {
  return channel
    .send({
      type: "checkpoint.reject",
      checkpointId,
      message: message.slice(0, MAX_REJECT_MESSAGE),
    })
    .catch(() => undefined);
}
