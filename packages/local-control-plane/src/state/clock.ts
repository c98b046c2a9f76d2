/** Where the control plane reads the time; tests pass a controllable one. */
export type Clock = () => number;

/** Heartbeat stamps that strictly increase, so a stale `expected_last_heartbeat` never matches a newer one. */
export function createHeartbeatStamps(clock: Clock): () => string {
  let last = 0;
  return () => {
    last = Math.max(clock(), last + 1);
    return new Date(last).toISOString();
  };
}
