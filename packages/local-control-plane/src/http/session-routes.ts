import { createError } from "@open-managed-agents/runtime-resource-contract";
import type { ControlPlaneState } from "../state/control-plane-state.js";
import { sessionToWire } from "../state/sessions.js";
import {
  type EventListQuery,
  type SessionEventWire,
  eventListQuerySchema,
  eventListSchema,
  eventStreamQuerySchema,
  sendEventsBodySchema,
  sendEventsResponseSchema,
  sessionEventSchema,
} from "../wire/event-schemas.js";
import { sessionSchema } from "../wire/session-schemas.js";
import { authenticate, requireBeta, requireSessionCredential } from "./auth.js";
import { parseQuery, readJson, sendJson } from "./respond.js";
import { type Route, type RouteContext, pathParam } from "./router.js";

const SSE_PING_MS = 15_000;

/** Whether `event` passes the list query's `types` and `created_at` filters (compared with `processed_at`). */
function matchesListQuery(event: SessionEventWire, query: EventListQuery): boolean {
  if (query.types !== undefined && !query.types.includes(event.type)) return false;
  const at = Date.parse(event.processed_at);
  const {
    "created_at[gt]": gt,
    "created_at[gte]": gte,
    "created_at[lt]": lt,
    "created_at[lte]": lte,
  } = query;
  const after = (gt === undefined || at > gt) && (gte === undefined || at >= gte);
  return after && (lt === undefined || at < lt) && (lte === undefined || at <= lte);
}

/** Sessions retrieve, events list/send/stream (SSE), and file content. */
export function sessionRoutes(
  state: ControlPlaneState,
  limits: { readonly maxBodyBytes: number },
): Route[] {
  const open = (context: RouteContext) => {
    requireBeta(context.request);
    const principal = authenticate(state, context.token);
    const session = state.sessions.get(pathParam(context, "session_id"));
    requireSessionCredential(principal, session);
    return session;
  };
  return [
    {
      method: "GET",
      path: "/v1/sessions/:session_id",
      handler: (context) =>
        sendJson(context.response, 200, sessionSchema, sessionToWire(open(context))),
    },
    {
      method: "GET",
      path: "/v1/sessions/:session_id/events/stream",
      handler: (context) => {
        const session = open(context);
        // Deltas are previews of model output; the scripted agent has none, so a request for them streams events only.
        parseQuery(context.url, eventStreamQuerySchema, "event stream query");
        const { response } = context;
        response.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
          connection: "keep-alive",
        });
        response.flushHeaders();
        const write = (event: unknown) => {
          const checked = sessionEventSchema.parse(event);
          response.write(`event: message\ndata: ${JSON.stringify(checked)}\n\n`);
          if (checked.type === "session.status_terminated") response.end();
        };
        session.subscribers.add(write);
        const ping = setInterval(() => response.write("event: ping\ndata: {}\n\n"), SSE_PING_MS);
        response.once("close", () => {
          clearInterval(ping);
          session.subscribers.delete(write);
        });
        if (session.status === "terminated") response.end();
      },
    },
    {
      method: "GET",
      path: "/v1/sessions/:session_id/events",
      handler: (context) => {
        const session = open(context);
        const query = parseQuery(context.url, eventListQuerySchema, "event list query");
        const matching = session.events.filter((event) => matchesListQuery(event, query));
        const ordered = query.order === "desc" ? matching.reverse() : matching;
        const start = query.page === undefined ? 0 : Number(query.page);
        const limit = query.limit ?? 100;
        const page = ordered.slice(start, start + limit);
        sendJson(context.response, 200, eventListSchema, {
          data: page,
          next_page: start + limit < ordered.length ? String(start + limit) : null,
        });
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/:session_id/events",
      handler: async (context) => {
        const session = open(context);
        const body = await readJson(
          context.request,
          sendEventsBodySchema,
          "send events body",
          limits.maxBodyBytes,
        );
        if (session.status === "terminated")
          throw createError("invalid_request", {
            message: `session ${session.id} is terminated`,
            context: { sessionId: session.id },
          });
        const stored = body.events.map((params) => state.sessions.receive(session, params));
        sendJson(context.response, 200, sendEventsResponseSchema, { data: stored });
      },
    },
    {
      method: "GET",
      path: "/v1/files/:file_id/content",
      handler: (context) => {
        const principal = authenticate(state, context.token);
        const file = state.file(pathParam(context, "file_id"));
        const mountedBy = state.sessions
          .all()
          .filter((session) => session.files.some((mounted) => mounted.fileId === file.id));
        const allowed =
          principal.kind === "api_key" ||
          mountedBy.some((session) => {
            try {
              requireSessionCredential(principal, session);
              return true;
            } catch {
              return false;
            }
          });
        if (!allowed)
          throw createError("unauthorized", {
            message: "this credential does not grant access to the file",
          });
        context.response.writeHead(200, {
          "content-type": file.mimeType,
          "content-length": file.bytes.length,
        });
        context.response.end(file.bytes);
      },
    },
  ];
}
