/**
 * Set by an environment worker that held the item's Work lease while it prepared the sandbox: the server's
 * `last_heartbeat` of its final renewal, which it stopped renewing before this process started.
 */
export const LEASE_HANDOVER_ENV = "OMA_WORK_LAST_HEARTBEAT";

/** The literal a first heartbeat sends when nobody holds the lease yet. */
const NO_HEARTBEAT = "NO_HEARTBEAT";

/**
 * A `fetch` that continues a handed-over lease: the SDK's first heartbeat of `workId` asks for an unclaimed
 * lease (`expected_last_heartbeat=NO_HEARTBEAT`), which the server refuses (412) once the environment
 * worker has renewed it; this sends the handed-over value in its place (again when that first heartbeat
 * failed and is sent anew). Once answered, the SDK echoes the server's value, which passes as it is. Without
 * a handed-over value, `base` is returned as is.
 */
export function leaseHandoverFetch(
  base: typeof fetch,
  workId: string,
  lastHeartbeat: string | undefined,
): typeof fetch {
  if (!lastHeartbeat) return base;
  const path = `/work/${encodeURIComponent(workId)}/heartbeat`;
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (
      !url.pathname.endsWith(path) ||
      url.searchParams.get("expected_last_heartbeat") !== NO_HEARTBEAT
    ) {
      return base(input, init);
    }
    url.searchParams.set("expected_last_heartbeat", lastHeartbeat);
    return input instanceof Request
      ? base(new Request(url, input), init)
      : base(url.toString(), init);
  };
}
