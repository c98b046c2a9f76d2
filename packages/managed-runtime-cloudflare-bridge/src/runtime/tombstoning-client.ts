import {
  type DestroyedSandboxes,
  createDestroyedSandboxes,
} from "@open-managed-agents/managed-runtime-sandbox";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";

/**
 * When, after a late call settled, its container may still be starting in the bridge: soon for a call
 * the bridge answered, and up to the Container class's whole start budget (8 s to get an instance, 20 s
 * for the port, each ping up to 5 s) for a call given up on this side while the bridge went on starting.
 */
export const LATE_DELETES_MS: readonly number[] = [3_000, 35_000];

/** How many sandboxes with a given-up call are remembered until their destroy. */
const GIVEN_UP_MEMORY = 4_096;

/** Codes of a call that ended without the bridge's answer: the request may still be carried out. */
const UNANSWERED_CODES = new Set(["aborted", "timeout", "unavailable"]);

/**
 * Whether `error` is a call refused on every attempt: the bridge never saw it, so it starts nothing later, and
 * no delete need follow it (each delete of a sandbox without a container costs the bridge a container start).
 */
const wasUnsent = (error: unknown): boolean =>
  ManagedRuntimeError.isInstance(error) &&
  (error.context as { unsent?: unknown } | undefined)?.unsent === true;

function wasGivenUp(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  if (wasUnsent(error)) return false;
  return !ManagedRuntimeError.isInstance(error) || UNANSWERED_CODES.has(error.code);
}

/**
 * Wraps a client so that nothing reaches the bridge for a sandbox this driver destroyed. The bridge
 * answers every call for a known id by starting a fresh, empty container, so a late exec, file read,
 * persist or hydrate after `destroy` (a checkpoint after the runtime was reaped, a heartbeat after a
 * terminate) would leave a container running and present it as the old runtime. Those calls fail
 * with `lease_lost` instead; `running` reports false; `destroy` stays idempotent.
 *
 * A call already in flight when `destroy` is issued may still be starting a container that the
 * delete cannot see yet (the bridge deletes only an assigned container), so each such call is
 * followed by best-effort deletes once it settles: one at once, then at each of {@link LATE_DELETES_MS}
 * after the last such call of that sandbox settled. Each of these deletes costs the bridge a container
 * start when nothing is left to delete, so calls settling one after another share one set of late deletes.
 *
 * A call given up on this side before `destroy` (its signal aborted when the run lost its lease, or no
 * answer came) settles here at once while the bridge may go on starting its container, after the delete
 * that follows. `destroy` of such a sandbox is followed by the same late deletes. A call refused on every
 * attempt (`unsent`) reached nothing, so it is followed by no delete at all.
 */
export function createTombstoningClient(
  client: BridgeClient,
  destroyed: DestroyedSandboxes = createDestroyedSandboxes(),
): BridgeClient {
  // Sandboxes with a call given up before any destroy of them: the bridge may still be starting its container.
  const givenUp = new Set<string>();
  const noteGivenUp = (id: string, error: unknown, signal: AbortSignal | undefined): void => {
    if (destroyed.has(id) || !wasGivenUp(error, signal)) return;
    givenUp.delete(id);
    givenUp.add(id);
    if (givenUp.size > GIVEN_UP_MEMORY) givenUp.delete(givenUp.values().next().value as string);
  };
  const guarded = async <T>(
    id: string,
    operation: string,
    signal: AbortSignal | undefined,
    call: () => Promise<T>,
  ): Promise<T> => {
    destroyed.refuse(id, operation);
    let unsent = false;
    try {
      return await call();
    } catch (error) {
      unsent = wasUnsent(error);
      noteGivenUp(id, error, signal);
      throw error;
    } finally {
      if (!unsent) deleteIfDestroyedMeanwhile(id);
    }
  };
  // Deletes this wrapper issued and that have not answered; a follow-up waits for them so that it is a
  // request of its own, not one joined to a delete the bridge may have answered before the start landed.
  const deleting = new Map<string, Promise<void>>();
  // The late deletes each sandbox has scheduled: a call that settles later moves them later.
  const lateDeletes = new Map<string, ReturnType<typeof setTimeout>[]>();
  const deleteIfDestroyedMeanwhile = (id: string) => {
    if (!destroyed.has(id)) return;
    const previous = deleting.get(id) ?? Promise.resolve();
    void previous
      .catch(() => undefined)
      .then(() => client.destroy(id))
      .catch(() => undefined);
    scheduleLateDeletes(id);
  };
  const scheduleLateDeletes = (id: string) => {
    // A call given up on this side (aborted, timed out) may still be starting its container in the bridge.
    // Deletes after the last settled call cover every earlier one's start too. The timers do not hold the
    // process open.
    for (const timer of lateDeletes.get(id) ?? []) clearTimeout(timer);
    const timers = LATE_DELETES_MS.map((delayMs, index) =>
      setTimeout(() => {
        if (index === LATE_DELETES_MS.length - 1 && lateDeletes.get(id) === timers)
          lateDeletes.delete(id);
        void client.destroy(id).catch(() => undefined);
      }, delayMs),
    );
    for (const timer of timers) timer.unref?.();
    lateDeletes.set(id, timers);
  };

  return {
    create: (signal) => client.create(signal),
    async running(id, signal) {
      if (destroyed.has(id)) return false;
      return guarded(id, "running", signal, () => client.running(id, signal));
    },
    async *exec(id, input): AsyncGenerator<BridgeExecEvent> {
      destroyed.refuse(id, "exec");
      let unsent = false;
      try {
        yield* client.exec(id, input);
      } catch (error) {
        unsent = wasUnsent(error);
        noteGivenUp(id, error, input.signal);
        throw error;
      } finally {
        if (!unsent) deleteIfDestroyedMeanwhile(id);
      }
    },
    readFile: (id, path, signal) =>
      guarded(id, "file read", signal, () => client.readFile(id, path, signal)),
    writeFile: (id, path, body, signal) =>
      guarded(id, "file write", signal, () => client.writeFile(id, path, body, signal)),
    persist: (id, excludes, signal) =>
      guarded(id, "persist", signal, () => client.persist(id, excludes, signal)),
    hydrate: (id, tar, signal) =>
      guarded(id, "hydrate", signal, () => client.hydrate(id, tar, signal)),
    async destroy(id) {
      // Remembered before the request: a call racing the delete must not start a fresh container either.
      destroyed.remember(id);
      const request = client.destroy(id);
      deleting.set(id, request);
      try {
        await request;
      } finally {
        if (deleting.get(id) === request) deleting.delete(id);
        if (givenUp.delete(id)) scheduleLateDeletes(id);
      }
    },
  };
}
