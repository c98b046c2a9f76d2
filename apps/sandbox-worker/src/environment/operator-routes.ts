import { InvalidRequestError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { ID_PATTERN } from "../config.js";
import type { WorkerBindings } from "../bindings.js";
import { json } from "../http/responses.js";
import { runtimeStores } from "../runtime/stores.js";
import { createClaimedWorkStore } from "./claimed-store.js";

const CLAIMED_ITEM = /^\/v1\/environment\/work\/([^/]+)$/;
const LIST_LIMIT = 100;

function parseLimit(url: URL): number {
  const raw = url.searchParams.get("limit");
  if (raw === null) return LIST_LIMIT;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT) {
    throw new InvalidRequestError({
      message: `limit must be a whole number from 1 to ${LIST_LIMIT}`,
      context: { field: "limit" },
    });
  }
  return limit;
}

/**
 * Bearer-authenticated operator reads of the environment: `GET /v1/environment/work` (claimed items,
 * newest first), `GET /v1/environment/work/:workId` and `GET /v1/orphans` (runtimes waiting to be
 * reaped). Null when the path is none of these.
 */
export async function routeOperatorReads(
  request: Request,
  { DB }: WorkerBindings,
): Promise<Response | null> {
  const url = new URL(request.url);
  const item = CLAIMED_ITEM.exec(url.pathname);
  const known =
    item !== null || url.pathname === "/v1/environment/work" || url.pathname === "/v1/orphans";
  if (!known) return null;
  if (request.method !== "GET") {
    const error = new InvalidRequestError({
      message: "method not allowed; use GET",
      context: { allowed: "GET" },
    });
    return json(405, { error: error.toJSON() }, { allow: "GET" });
  }
  if (url.pathname === "/v1/orphans")
    return json(200, { data: await runtimeStores(DB).orphans.list({ limit: parseLimit(url) }) });
  const store = createClaimedWorkStore(DB);
  if (item === null) return json(200, { data: await store.list(parseLimit(url)) });
  const workId = item[1] ?? "";
  if (!ID_PATTERN.test(workId))
    throw new InvalidRequestError({
      message: "workId must be 1-128 letters, digits, '.', '_' or '-'",
      context: { field: "workId" },
    });
  const record = await store.get(workId);
  if (record === null)
    throw new NotFoundError({ message: `no claimed work item ${workId}`, context: { workId } });
  return json(200, record);
}
