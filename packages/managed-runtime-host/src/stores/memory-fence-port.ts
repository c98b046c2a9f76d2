import type {
  FenceAcquireResult,
  FencePublishResult,
  FenceRenewResult,
  RuntimeResourceFence,
  RuntimeResourceFencePort,
  RuntimeResourcePublication,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type PublicationBody,
  createFenceToken,
  parseAcquireInput,
  parseFence,
  parseGenerationInput,
  parsePublishIfLatestInput,
  parsePublishInput,
  parseReleaseInput,
  parseRenewInput,
  sessionKey,
} from "./fence-inputs.js";
import { type StoreClockOptions, isoTime, parseStoreClockOptions } from "./store-options.js";

/** Options of {@link createMemoryFencePort}. */
export type MemoryFencePortOptions = StoreClockOptions;

interface Holder {
  readonly workId: string;
  readonly ownerId: string;
  readonly token: string;
  expiresAtMs: number;
}

interface SessionState {
  /** Highest generation ever issued for the session; survives release and expiry. */
  generation: number;
  holder: Holder | null;
  publishedGeneration: number;
  publication: RuntimeResourcePublication | null;
}

/**
 * An in-process {@link RuntimeResourceFencePort}. Every method reads and writes its state without an
 * `await` in between, so each call is atomic with respect to every other call in the process. Fences
 * and publications live for the lifetime of the returned object; use it in tests and single-process
 * deployments.
 */
export function createMemoryFencePort(
  options: MemoryFencePortOptions = {},
): RuntimeResourceFencePort {
  const { clock } = parseStoreClockOptions(options, "memory fence port options");
  const sessions = new Map<string, SessionState>();

  const currentHolder = (
    fence: RuntimeResourceFence,
    now: number,
  ): { state: SessionState; holder: Holder } | null => {
    const state = sessions.get(sessionKey(fence));
    const holder = state?.holder;
    if (!state || !holder || !holdsFence(state, holder, fence) || holder.expiresAtMs <= now)
      return null;
    return { state, holder };
  };

  // The checks and the write run without an await in between: one atomic step for this process.
  const publishAt = (
    fence: RuntimeResourceFence,
    body: PublicationBody,
    expectedRevision: number | null,
  ): FencePublishResult => {
    const current = currentHolder(fence, clock.now());
    if (!current || current.state.publishedGeneration >= fence.generation) return { type: "lost" };
    const { state } = current;
    const latest = state.publication?.revision ?? 0;
    if (expectedRevision !== null && latest !== expectedRevision) return { type: "lost" };
    state.publishedGeneration = fence.generation;
    state.publication = structuredClone({
      generation: fence.generation,
      revision: latest + 1,
      ...body,
    });
    return { type: "published", revision: latest + 1 };
  };

  return {
    async acquire(input): Promise<FenceAcquireResult> {
      const { scope, ownerId, ttlMs } = parseAcquireInput(input);
      const now = clock.now();
      const key = sessionKey(scope);
      const state = sessions.get(key) ?? {
        generation: 0,
        holder: null,
        publishedGeneration: 0,
        publication: null,
      };
      const holder = state.holder;
      // The same owner re-acquiring its own work item supersedes its older fence; anyone else waits for expiry.
      const reentrant = holder?.ownerId === ownerId && holder.workId === scope.workId;
      if (holder && holder.expiresAtMs > now && !reentrant)
        return { type: "conflict", expiresAt: isoTime(holder.expiresAtMs) };
      state.generation += 1;
      state.holder = {
        workId: scope.workId,
        ownerId,
        token: createFenceToken(),
        expiresAtMs: now + ttlMs,
      };
      sessions.set(key, state);
      const fence: RuntimeResourceFence = {
        workspaceId: scope.workspaceId,
        environmentId: scope.environmentId,
        sessionId: scope.sessionId,
        workId: scope.workId,
        ownerId,
        generation: state.generation,
        token: state.holder.token,
        expiresAt: isoTime(state.holder.expiresAtMs),
      };
      return {
        type: "acquired",
        fence,
        publication: state.publication === null ? null : structuredClone(state.publication),
      };
    },

    async renew(input): Promise<FenceRenewResult> {
      const { fence, ttlMs } = parseRenewInput(input);
      const now = clock.now();
      const current = currentHolder(fence, now);
      if (!current) return { type: "lost" };
      current.holder.expiresAtMs = now + ttlMs;
      return {
        type: "renewed",
        fence: { ...fence, expiresAt: isoTime(current.holder.expiresAtMs) },
      };
    },

    async isCurrent(fence): Promise<boolean> {
      return currentHolder(parseFence(fence), clock.now()) !== null;
    },

    async isGenerationCurrent(input): Promise<boolean> {
      const { scope, generation, ownerId } = parseGenerationInput(input);
      const state = sessions.get(sessionKey(scope));
      const holder = state?.holder;
      // A later generation of the same owner and work item is the same run after a live checkpoint's rotation.
      if (!state || !holder || state.generation < generation) return false;
      return (
        holder.ownerId === ownerId &&
        holder.workId === scope.workId &&
        holder.expiresAtMs > clock.now()
      );
    },

    async publish(input): Promise<FencePublishResult> {
      const { fence, body } = parsePublishInput(input);
      return publishAt(fence, body, null);
    },

    async publishIfLatest(input): Promise<FencePublishResult> {
      const { fence, expectedRevision, body } = parsePublishIfLatestInput(input);
      return publishAt(fence, body, expectedRevision);
    },

    async release(input): Promise<void> {
      const { fence } = parseReleaseInput(input);
      const state = sessions.get(sessionKey(fence));
      // An expired fence may still be released while nobody has taken it over.
      if (state?.holder && holdsFence(state, state.holder, fence)) state.holder = null;
    },
  };
}

function holdsFence(state: SessionState, holder: Holder, fence: RuntimeResourceFence): boolean {
  return (
    state.generation === fence.generation &&
    holder.token === fence.token &&
    holder.workId === fence.workId &&
    holder.ownerId === fence.ownerId
  );
}
