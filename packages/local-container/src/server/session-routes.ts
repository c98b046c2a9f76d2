import { readJson } from "./request-body.js";
import { sessionCreateRequestSchema, sessionDeleteRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError } from "./control-api-error.js";
import { now, sendJson } from "./control-api-responses.js";

/** `POST /api/session/create`: 409 `SESSION_ALREADY_EXISTS` for a known id. */
export async function handleSessionCreate(context: RouteContext): Promise<void> {
  const body = await readJson(
    context.request,
    sessionCreateRequestSchema,
    context.limits.maxBodyBytes,
  );
  const id = body.id ?? `session_${Date.now()}_${Math.random().toString(16).slice(2, 14)}`;
  const session = context.container.sessions.create(id, {
    ...(body.cwd === undefined ? {} : { cwd: body.cwd }),
    ...(body.env === undefined ? {} : { env: body.env }),
    ...(body.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: body.commandTimeoutMs }),
  });
  // The published server returns its internal session object; only the stable parts are echoed, and
  // environment values stay out of the response.
  sendJson(context.response, 200, {
    success: true,
    data: {
      id: session.id,
      ready: true,
      isDestroying: false,
      options: { id: session.id, cwd: session.cwd, envKeys: Object.keys(body.env ?? {}) },
    },
    containerPlacementId: null,
    timestamp: now(),
  });
}

/** `POST /api/session/delete`: ends the session's shell and kills every process started in it. */
export async function handleSessionDelete(context: RouteContext): Promise<void> {
  const body = await readJson(
    context.request,
    sessionDeleteRequestSchema,
    context.limits.maxBodyBytes,
  );
  if (!context.container.sessions.delete(body.sessionId)) {
    throw new ControlApiError("SESSION_NOT_FOUND", 404, `Session not found: ${body.sessionId}`, {
      sessionId: body.sessionId,
    });
  }
  sendJson(context.response, 200, { success: true, sessionId: body.sessionId, timestamp: now() });
}

/** `GET /api/session/list`. */
export async function handleSessionList(context: RouteContext): Promise<void> {
  sendJson(context.response, 200, {
    success: true,
    data: context.container.sessions.list(),
    timestamp: now(),
  });
}
