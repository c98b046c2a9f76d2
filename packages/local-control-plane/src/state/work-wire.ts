import type { WorkItemWire } from "../wire/work-schemas.js";
import { rfc3339 } from "./ids.js";
import type { WorkRecord } from "./work-queue.js";

/** Wire form of an item; `secret` only on the poll path. */
export function toWire(work: WorkRecord, withSecret: boolean): WorkItemWire {
  const at = (ms: number | null) => (ms === null ? null : rfc3339(ms));
  return {
    id: work.id,
    type: "work",
    environment_id: work.environmentId,
    state: work.state,
    data:
      work.data.type === "session"
        ? { type: "session", id: work.data.id }
        : { type: "healthcheck", id: work.data.id },
    metadata: { ...work.metadata },
    secret: withSecret ? work.secret : null,
    created_at: rfc3339(work.createdAt),
    acknowledged_at: at(work.acknowledgedAt),
    started_at: at(work.startedAt),
    latest_heartbeat_at: at(work.latestHeartbeatAt),
    stop_requested_at: at(work.stopRequestedAt),
    stopped_at: at(work.stoppedAt),
  };
}
