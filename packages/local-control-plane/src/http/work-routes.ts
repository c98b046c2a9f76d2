import { createError } from "@open-managed-agents/runtime-resource-contract";
import type { ControlPlaneState } from "../state/control-plane-state.js";
import { toWire } from "../state/work-wire.js";
import {
  heartbeatQuerySchema,
  heartbeatResponseSchema,
  listQuerySchema,
  pollQuerySchema,
  queueStatsSchema,
  emptyBodySchema,
  stopBodySchema,
  updateBodySchema,
  WORK_METADATA_LIMITS,
  workItemSchema,
  workListSchema,
} from "../wire/work-schemas.js";
import {
  authenticate,
  requireApiKey,
  requireBeta,
  requireEnvironmentKey,
  requireWorkCredential,
} from "./auth.js";
import { parseQuery, readJson, sendJson } from "./respond.js";
import { type Route, type RouteContext, pathParam } from "./router.js";

/** The Work API: poll, ack, heartbeat, stop, stats, list, retrieve, update. */
export function workRoutes(
  state: ControlPlaneState,
  limits: { readonly maxBodyBytes: number },
): Route[] {
  const prefix = "/v1/environments/:environment_id/work";
  const open = (context: RouteContext) => {
    requireBeta(context.request);
    const principal = authenticate(state, context.token);
    return { principal, environment: state.environment(pathParam(context, "environment_id")) };
  };
  return [
    {
      method: "GET",
      path: `${prefix}/poll`,
      handler: async (context) => {
        const { principal, environment } = open(context);
        requireEnvironmentKey(principal, environment);
        const query = parseQuery(context.url, pollQuerySchema, "poll query");
        const aborted = new AbortController();
        context.response.once("close", () => aborted.abort());
        const workerId = context.request.headers["anthropic-worker-id"];
        const work = await state.work.poll(
          environment.id,
          {
            ...(query.block_ms !== undefined ? { blockMs: query.block_ms } : {}),
            ...(query.reclaim_older_than_ms !== undefined
              ? { reclaimMs: query.reclaim_older_than_ms }
              : {}),
            ...(typeof workerId === "string" ? { workerId } : {}),
          },
          aborted.signal,
        );
        if (work === null) {
          context.response.writeHead(204).end();
          return;
        }
        sendJson(context.response, 200, workItemSchema, toWire(work, true));
      },
    },
    {
      method: "GET",
      path: `${prefix}/stats`,
      handler: (context) => {
        const { principal, environment } = open(context);
        if (principal.kind !== "api_key") requireEnvironmentKey(principal, environment);
        sendJson(context.response, 200, queueStatsSchema, state.work.stats(environment.id));
      },
    },
    {
      method: "GET",
      path: prefix,
      handler: (context) => {
        const { principal, environment } = open(context);
        requireEnvironmentKey(principal, environment);
        const query = parseQuery(context.url, listQuerySchema, "work list query");
        const all = state.work.list(environment.id);
        const start = query.page === undefined ? 0 : Number.parseInt(query.page, 10);
        if (!Number.isSafeInteger(start) || start < 0)
          throw createError("invalid_request", {
            message: "page is not a cursor this server issued",
          });
        const limit = query.limit ?? 20;
        const page = all.slice(start, start + limit);
        sendJson(context.response, 200, workListSchema, {
          data: page.map((work) => toWire(work, false)),
          next_page: start + limit < all.length ? String(start + limit) : null,
        });
      },
    },
    {
      method: "GET",
      path: `${prefix}/:work_id`,
      handler: (context) => {
        const { principal, environment } = open(context);
        requireApiKey(principal);
        sendJson(
          context.response,
          200,
          workItemSchema,
          toWire(state.work.get(environment.id, pathParam(context, "work_id")), false),
        );
      },
    },
    {
      method: "POST",
      path: `${prefix}/:work_id`,
      handler: async (context) => {
        const { principal, environment } = open(context);
        requireApiKey(principal);
        const body = await readJson(
          context.request,
          updateBodySchema,
          "work update body",
          limits.maxBodyBytes,
        );
        const work = state.work.updateMetadata(
          environment.id,
          pathParam(context, "work_id"),
          body.metadata ?? {},
          WORK_METADATA_LIMITS.keys,
        );
        sendJson(context.response, 200, workItemSchema, toWire(work, false));
      },
    },
    {
      method: "POST",
      path: `${prefix}/:work_id/ack`,
      handler: async (context) => {
        const { principal, environment } = open(context);
        requireEnvironmentKey(principal, environment);
        await readJson(context.request, emptyBodySchema, "ack body", limits.maxBodyBytes);
        sendJson(
          context.response,
          200,
          workItemSchema,
          toWire(state.work.ack(environment.id, pathParam(context, "work_id")), false),
        );
      },
    },
    {
      method: "POST",
      path: `${prefix}/:work_id/heartbeat`,
      handler: async (context) => {
        const { principal, environment } = open(context);
        requireWorkCredential(principal, environment, pathParam(context, "work_id"));
        const query = parseQuery(context.url, heartbeatQuerySchema, "heartbeat query");
        await readJson(context.request, emptyBodySchema, "heartbeat body", limits.maxBodyBytes);
        const result = state.work.heartbeat(environment.id, pathParam(context, "work_id"), {
          ...(query.desired_ttl_seconds !== undefined
            ? { desiredTtlSeconds: query.desired_ttl_seconds }
            : {}),
          ...(query.expected_last_heartbeat !== undefined
            ? { expectedLastHeartbeat: query.expected_last_heartbeat }
            : {}),
        });
        sendJson(context.response, 200, heartbeatResponseSchema, {
          type: "work_heartbeat",
          ...result,
        });
      },
    },
    {
      method: "POST",
      path: `${prefix}/:work_id/stop`,
      handler: async (context) => {
        const { principal, environment } = open(context);
        // The API key is the operator asking the holder to stop; a worker credential ends its own work.
        if (principal.kind !== "api_key")
          requireWorkCredential(principal, environment, pathParam(context, "work_id"));
        const body = await readJson(
          context.request,
          stopBodySchema,
          "stop body",
          limits.maxBodyBytes,
        );
        const by = principal.kind === "api_key" ? "operator" : "worker";
        sendJson(
          context.response,
          200,
          workItemSchema,
          toWire(
            state.work.stop(environment.id, pathParam(context, "work_id"), {
              force: body.force ?? false,
              by,
            }),
            false,
          ),
        );
      },
    },
  ];
}
