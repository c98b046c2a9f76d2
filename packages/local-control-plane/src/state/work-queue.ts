import { createError } from "@open-managed-agents/runtime-resource-contract";
import { HeartbeatPreconditionFailedError, type LeaseState } from "../errors.js";
import type { ControlPlaneObserver } from "../events.js";
import type { WorkState } from "../wire/work-schemas.js";
import { type Clock, createHeartbeatStamps } from "./clock.js";
import { newId, newToken, rfc3339 } from "./ids.js";

/** The literal a first heartbeat sends as `expected_last_heartbeat`. */
export const NO_HEARTBEAT = "NO_HEARTBEAT";

/** A work item as the control plane keeps it. The sessions token never leaves except inside `secret`. */
export interface WorkRecord {
  readonly id: string;
  readonly environmentId: string;
  readonly data: { readonly type: "session" | "healthcheck"; readonly id: string };
  readonly createdAt: number;
  readonly metadata: Record<string, string>;
  state: WorkState;
  sessionsToken: string;
  secret: string;
  polledAt: number | null;
  acknowledgedAt: number | null;
  startedAt: number | null;
  lastHeartbeat: string | null;
  latestHeartbeatAt: number | null;
  leaseExpiresAt: number | null;
  ttlSeconds: number;
  stopRequestedAt: number | null;
  stoppedAt: number | null;
  /** How many times the item was handed out by a poll. */
  deliveries: number;
}

/** Options of {@link createWorkQueue}. */
export interface WorkQueueOptions {
  readonly clock: Clock;
  /** Base URL written into each secret's `api_base_url`. */
  readonly apiBaseUrl: () => string;
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
  readonly defaultReclaimMs: number;
  /** Called once whenever an item enters `queued` (new or re-queued after its lease expired). */
  readonly onQueued: (work: WorkRecord) => void;
  /** Called once when an item reaches `stopped`. */
  readonly onStopped: (work: WorkRecord) => void;
  readonly observe: ControlPlaneObserver;
}

function encodeSecret(sessionsToken: string, apiBaseUrl: string): string {
  return Buffer.from(
    JSON.stringify({ sessions_token: sessionsToken, api_base_url: apiBaseUrl }),
    "utf8",
  ).toString("base64url");
}

/** The Work API's lease rules over an in-memory queue: claim, ack, heartbeat TTLs, reclaim, stop. */
export function createWorkQueue(options: WorkQueueOptions) {
  const items = new Map<string, WorkRecord>();
  const stamp = createHeartbeatStamps(options.clock);
  const waiters = new Set<() => void>();
  const lastPollByWorker = new Map<string, { environmentId: string; at: number }>();

  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const reissueSecret = (work: WorkRecord) => {
    work.sessionsToken = newToken("sk-ant-req-local-");
    work.secret = encodeSecret(work.sessionsToken, options.apiBaseUrl());
  };

  const markStopped = (work: WorkRecord) => {
    if (work.state === "stopped") return;
    work.state = "stopped";
    work.stoppedAt = options.clock();
    work.leaseExpiresAt = null;
    options.observe({ type: "work_stopped", workId: work.id, environmentId: work.environmentId });
    options.onStopped(work);
  };

  /** Applies lease expiry: an expired active lease returns the item to the queue; an expired `stopping` one stops it. */
  const expire = (work: WorkRecord) => {
    if (work.leaseExpiresAt === null || work.leaseExpiresAt > options.clock()) return;
    if (work.state === "stopping") return markStopped(work);
    if (work.state !== "starting" && work.state !== "active") return;
    Object.assign(work, {
      state: "queued",
      polledAt: null,
      acknowledgedAt: null,
      startedAt: null,
      lastHeartbeat: null,
      latestHeartbeatAt: null,
      leaseExpiresAt: null,
    });
    // The previous holder's sessions token dies with its lease.
    reissueSecret(work);
    options.observe({
      type: "work_queued",
      workId: work.id,
      environmentId: work.environmentId,
      sessionId: work.data.type === "session" ? work.data.id : null,
      reason: "lease_expired",
    });
    options.onQueued(work);
    wake();
  };

  const get = (environmentId: string, workId: string): WorkRecord => {
    const work = items.get(workId);
    if (!work || work.environmentId !== environmentId) {
      throw createError("not_found", {
        message: `work item ${workId} not found in environment ${environmentId}`,
        context: { workId, environmentId },
      });
    }
    expire(work);
    return work;
  };

  const leaseState = (work: WorkRecord): LeaseState => ({
    last_heartbeat: work.lastHeartbeat,
    lease_extended: false,
    state: work.state,
    ttl_seconds: work.ttlSeconds,
  });

  const claimable = (environmentId: string, reclaimMs: number): WorkRecord | undefined => {
    const now = options.clock();
    let oldest: WorkRecord | undefined;
    for (const work of items.values()) {
      if (work.environmentId !== environmentId) continue;
      expire(work);
      if (work.state !== "queued" || (work.polledAt !== null && now - work.polledAt < reclaimMs))
        continue;
      if (!oldest || work.createdAt < oldest.createdAt) oldest = work;
    }
    return oldest;
  };

  return {
    /** Queues a new item. */
    enqueue(input: {
      environmentId: string;
      data: WorkRecord["data"];
      metadata?: Record<string, string>;
    }): WorkRecord {
      const work: WorkRecord = {
        id: newId("work"),
        environmentId: input.environmentId,
        data: input.data,
        createdAt: options.clock(),
        metadata: { ...input.metadata },
        state: "queued",
        sessionsToken: "",
        secret: "",
        polledAt: null,
        acknowledgedAt: null,
        startedAt: null,
        lastHeartbeat: null,
        latestHeartbeatAt: null,
        leaseExpiresAt: null,
        ttlSeconds: options.defaultTtlSeconds,
        stopRequestedAt: null,
        stoppedAt: null,
        deliveries: 0,
      };
      reissueSecret(work);
      items.set(work.id, work);
      options.observe({
        type: "work_queued",
        workId: work.id,
        environmentId: work.environmentId,
        sessionId: work.data.type === "session" ? work.data.id : null,
        reason: "new",
      });
      options.onQueued(work);
      wake();
      return work;
    },

    /** Claims the oldest claimable item, waiting up to `blockMs` for one. Unacked claims are reclaimable after `reclaimMs`. */
    async poll(
      environmentId: string,
      query: { blockMs?: number; reclaimMs?: number; workerId?: string },
      signal?: AbortSignal,
    ): Promise<WorkRecord | null> {
      const reclaimMs = query.reclaimMs ?? options.defaultReclaimMs;
      if (query.workerId)
        lastPollByWorker.set(query.workerId, { environmentId, at: options.clock() });
      let work = claimable(environmentId, reclaimMs);
      if (!work && query.blockMs) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, query.blockMs);
          waiters.add(done);
          signal?.addEventListener("abort", done);
        });
        if (signal?.aborted) return null;
        work = claimable(environmentId, reclaimMs);
      }
      if (!work) return null;
      work.polledAt = options.clock();
      work.deliveries += 1;
      options.observe({
        type: "work_claimed",
        workId: work.id,
        environmentId,
        deliveries: work.deliveries,
      });
      return work;
    },

    /** `queued` (claimed) → `starting`. The lease runs from here with the default TTL until the first heartbeat. */
    ack(environmentId: string, workId: string): WorkRecord {
      const work = get(environmentId, workId);
      if (work.state !== "queued" || work.polledAt === null) {
        throw createError("fence_conflict", {
          message: `work item ${workId} is ${work.state === "queued" ? "not claimed" : work.state}; only a claimed queued item can be acknowledged`,
          context: { workId, state: work.state },
        });
      }
      const now = options.clock();
      Object.assign(work, {
        state: "starting",
        acknowledgedAt: now,
        leaseExpiresAt: now + work.ttlSeconds * 1000,
      });
      options.observe({ type: "work_acknowledged", workId, environmentId });
      return work;
    },

    /** Renews the lease. A stale `expected_last_heartbeat` throws {@link HeartbeatPreconditionFailedError}. */
    heartbeat(
      environmentId: string,
      workId: string,
      query: { desiredTtlSeconds?: number; expectedLastHeartbeat?: string },
    ) {
      const work = get(environmentId, workId);
      if (work.state === "stopping" || work.state === "stopped") {
        return {
          last_heartbeat: work.lastHeartbeat ?? "",
          lease_extended: false,
          state: work.state,
          ttl_seconds: work.ttlSeconds,
        };
      }
      const stored = work.lastHeartbeat ?? NO_HEARTBEAT;
      // A first heartbeat claims a polled item's lease even before its ack (SDK 1.17's handleItem starts so).
      const claims =
        work.state === "queued" &&
        work.polledAt !== null &&
        query.expectedLastHeartbeat === NO_HEARTBEAT;
      const stale =
        query.expectedLastHeartbeat !== undefined && query.expectedLastHeartbeat !== stored;
      if ((work.state === "queued" && !claims) || stale) {
        options.observe({ type: "heartbeat_refused", workId, environmentId, state: work.state });
        throw new HeartbeatPreconditionFailedError({
          message:
            work.state === "queued"
              ? `work item ${workId} holds no lease (it is queued)`
              : `expected_last_heartbeat does not match the stored heartbeat of work item ${workId}`,
          workId,
          currentState: leaseState(work),
        });
      }
      const now = options.clock();
      work.ttlSeconds = Math.min(query.desiredTtlSeconds ?? work.ttlSeconds, options.maxTtlSeconds);
      work.lastHeartbeat = stamp();
      work.latestHeartbeatAt = now;
      work.leaseExpiresAt = now + work.ttlSeconds * 1000;
      if (claims) options.observe({ type: "work_acknowledged", workId, environmentId });
      if (work.state === "queued") work.acknowledgedAt = now;
      if (work.state === "queued" || work.state === "starting")
        Object.assign(work, { state: "active", startedAt: now });
      return {
        last_heartbeat: work.lastHeartbeat,
        lease_extended: true,
        state: work.state,
        ttl_seconds: work.ttlSeconds,
      };
    },

    /**
     * Ends an item. A worker's stop (`by: "worker"`, the environment key or the item's token) ends its own
     * work at once; an operator's graceful stop (`by: "operator"`) asks the holder to wind down: the item is
     * `stopping` until the holder stops it, a forced stop, or its lease expiring. An unheld item stops at once.
     */
    stop(
      environmentId: string,
      workId: string,
      how: { force: boolean; by: "worker" | "operator" },
    ): WorkRecord {
      const work = get(environmentId, workId);
      if (work.state === "stopped") {
        throw createError("fence_conflict", {
          message: `work item ${workId} is already stopped`,
          context: { workId },
        });
      }
      work.stopRequestedAt ??= options.clock();
      if (how.force || how.by === "worker" || work.state === "queued" || work.state === "stopping")
        markStopped(work);
      else {
        work.state = "stopping";
        options.observe({ type: "work_stopping", workId, environmentId });
      }
      return work;
    },

    /**
     * Merges `patch` into the item's metadata (`null` deletes a key). A result with more than `maxKeys` keys is
     * refused and changes nothing.
     */
    updateMetadata(
      environmentId: string,
      workId: string,
      patch: Readonly<Record<string, string | null>>,
      maxKeys: number,
    ): WorkRecord {
      const work = get(environmentId, workId);
      const merged: Record<string, string> = { ...work.metadata };
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete merged[key];
        else merged[key] = value;
      }
      if (Object.keys(merged).length > maxKeys) {
        const keys = Object.keys(merged).length;
        throw createError("invalid_request", {
          message: `work item metadata holds at most ${maxKeys} keys`,
          context: { workId, keys },
        });
      }
      for (const key of Object.keys(work.metadata)) delete work.metadata[key];
      Object.assign(work.metadata, merged);
      return work;
    },

    /** Fault injection: the lease is renewed by someone else, so the holder's next heartbeat is stale (412). */
    takeOverLease(environmentId: string, workId: string): WorkRecord {
      const work = get(environmentId, workId);
      if (work.state !== "starting" && work.state !== "active") {
        throw createError("fence_conflict", {
          message: `work item ${workId} holds no lease (it is ${work.state})`,
          context: { workId, state: work.state },
        });
      }
      const now = options.clock();
      Object.assign(work, {
        state: "active",
        startedAt: work.startedAt ?? now,
        lastHeartbeat: stamp(),
        latestHeartbeatAt: now,
        leaseExpiresAt: now + work.ttlSeconds * 1000,
      });
      return work;
    },
    /** Fault injection: the lease expires now, as if its holder had crashed; the item returns to the queue. */
    expireLease(environmentId: string, workId: string): WorkRecord {
      const work = get(environmentId, workId);
      if (work.leaseExpiresAt === null)
        throw createError("fence_conflict", {
          message: `work item ${workId} holds no lease (it is ${work.state})`,
          context: { workId, state: work.state },
        });
      work.leaseExpiresAt = options.clock();
      return get(environmentId, workId);
    },

    get,
    /** An item by id alone (admin paths). */
    find(workId: string): WorkRecord {
      const work = items.get(workId);
      if (!work)
        throw createError("not_found", {
          message: `work item ${workId} not found`,
          context: { workId },
        });
      return get(work.environmentId, workId);
    },
    /** Every item of an environment, oldest first, after applying lease expiry. */
    list(environmentId?: string): WorkRecord[] {
      const all = [...items.values()].filter(
        (work) => environmentId === undefined || work.environmentId === environmentId,
      );
      for (const work of all) expire(work);
      return all.sort((a, b) => a.createdAt - b.createdAt);
    },
    /** The item whose sessions token this is, if any. */
    byToken(token: string): WorkRecord | undefined {
      for (const work of items.values()) if (work.sessionsToken === token) return work;
      return undefined;
    },
    stats(environmentId: string) {
      const now = options.clock();
      const queued = this.list(environmentId).filter((work) => work.state === "queued");
      const polling = [...lastPollByWorker.values()].filter(
        (poll) => poll.environmentId === environmentId && now - poll.at < 30_000,
      ).length;
      return {
        type: "work_queue_stats" as const,
        depth: queued.filter((work) => work.polledAt === null).length,
        pending: queued.filter((work) => work.polledAt !== null).length,
        oldest_queued_at: queued[0] ? rfc3339(queued[0].createdAt) : null,
        workers_polling: polling,
      };
    },
    /** Wakes blocked polls (server shutdown). */
    wakeAll: wake,
  };
}

/** The work queue's type. */
export type WorkQueue = ReturnType<typeof createWorkQueue>;
