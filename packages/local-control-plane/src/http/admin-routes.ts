import type * as z from "zod";
import type { ControlPlaneState } from "../state/control-plane-state.js";
import { rfc3339 } from "../state/ids.js";
import { sessionToWire } from "../state/sessions.js";
import type { SessionRecord } from "../state/sessions.js";
import type { Turn } from "../state/turn.js";
import type { WorkRecord } from "../state/work-queue.js";
import { toWire } from "../state/work-wire.js";
import {
  adminStopBodySchema,
  adminWorkQuerySchema,
  createEnvironmentBodySchema,
  createSessionBodySchema,
  deliveriesSchema,
  environmentCreatedSchema,
  fileCreatedSchema,
  queueTurnBodySchema,
  transcriptSchema,
  turnSchema,
  uploadFileQuerySchema,
  uploadSkillQuerySchema,
} from "../wire/admin-schemas.js";
import { skillVersionSchema } from "../wire/skill-schemas.js";
import { skillVersionToWire } from "./skill-routes.js";
import { sessionSchema } from "../wire/session-schemas.js";
import { emptyBodySchema, workItemSchema, workListSchema } from "../wire/work-schemas.js";
import { authenticate, requireApiKey } from "./auth.js";
import { parseQuery, readBody, readJson, sendJson } from "./respond.js";
import { type Route, type RouteContext, pathParam } from "./router.js";

/** Wire form of a turn. */
export function turnToWire(session: SessionRecord, turn: Turn) {
  return {
    type: "turn" as const,
    id: turn.id,
    session_id: session.id,
    state: turn.state,
    gate: turn.gate,
    tool_calls: turn.script.length,
    work_ids: [...turn.workIds],
  };
}

/** Wire form of a session's transcript. */
export function transcriptToWire(session: SessionRecord) {
  return {
    session_id: session.id,
    status: session.status,
    entries: session.transcript.map((entry) => ({
      turn_id: entry.turnId,
      tool_use_id: entry.toolUseId,
      name: entry.name,
      input: { ...entry.input },
      permission: entry.permission,
      work_id: entry.workId,
      requested_at: entry.requestedAt,
      answered_at: entry.answeredAt,
      result:
        entry.result === null
          ? null
          : { content: [...entry.result.content], is_error: entry.result.isError },
    })),
  };
}

/** The admin API (not part of the platform's SDK surface): environments, sessions, scripted turns, transcripts. */
export function adminRoutes(
  state: ControlPlaneState,
  limits: { readonly maxBodyBytes: number },
): Route[] {
  const admin = (context: RouteContext) => requireApiKey(authenticate(state, context.token));
  /** `POST /admin/v1/work/{id}/<action>`: an operator action on one item, answered with the item. */
  const workAction = <S extends z.ZodType>(
    action: string,
    bodySchema: S,
    act: (work: WorkRecord, body: z.output<S>) => WorkRecord,
  ): Route => ({
    method: "POST",
    path: `/admin/v1/work/:work_id/${action}`,
    handler: async (context) => {
      admin(context);
      const body = await readJson(
        context.request,
        bodySchema,
        `${action} body`,
        limits.maxBodyBytes,
      );
      sendJson(
        context.response,
        200,
        workItemSchema,
        toWire(act(state.work.find(pathParam(context, "work_id")), body), false),
      );
    },
  });
  return [
    {
      method: "POST",
      path: "/admin/v1/environments",
      handler: async (context) => {
        admin(context);
        const body = await readJson(
          context.request,
          createEnvironmentBodySchema,
          "create environment body",
          limits.maxBodyBytes,
        );
        const environment = state.createEnvironment(body);
        sendJson(context.response, 201, environmentCreatedSchema, {
          type: "environment",
          id: environment.id,
          name: environment.name,
          metadata: environment.metadata,
          environment_key: environment.key,
          created_at: rfc3339(environment.createdAt),
        });
      },
    },
    {
      method: "POST",
      path: "/admin/v1/environments/:environment_id/healthchecks",
      handler: async (context) => {
        admin(context);
        await readJson(context.request, emptyBodySchema, "healthcheck body", limits.maxBodyBytes);
        sendJson(
          context.response,
          201,
          workItemSchema,
          toWire(state.queueHealthcheck(pathParam(context, "environment_id")), false),
        );
      },
    },
    {
      method: "POST",
      path: "/admin/v1/sessions",
      handler: async (context) => {
        admin(context);
        const body = await readJson(
          context.request,
          createSessionBodySchema,
          "create session body",
          limits.maxBodyBytes,
        );
        const session = state.createSession({
          environmentId: body.environment_id,
          title: body.title,
          metadata: body.metadata,
          files: body.files.map((file) => ({ fileId: file.file_id, mountPath: file.mount_path })),
          skills: body.skills.map((skill) => ({ skillId: skill.skill_id, version: skill.version })),
        });
        sendJson(context.response, 201, sessionSchema, sessionToWire(session));
      },
    },
    {
      method: "POST",
      path: "/admin/v1/sessions/:session_id/turns",
      handler: async (context) => {
        admin(context);
        const body = await readJson(
          context.request,
          queueTurnBodySchema,
          "queue turn body",
          limits.maxBodyBytes,
        );
        const session = state.sessions.get(pathParam(context, "session_id"));
        const turn = state.sessions.queueTurn(session.id, {
          message: body.message,
          toolCalls: body.tool_calls,
          gate: body.gate,
          ...(body.final_message !== undefined ? { finalMessage: body.final_message } : {}),
        });
        sendJson(context.response, 201, turnSchema, turnToWire(session, turn));
      },
    },
    {
      method: "GET",
      path: "/admin/v1/sessions/:session_id/transcript",
      handler: (context) => {
        admin(context);
        sendJson(
          context.response,
          200,
          transcriptSchema,
          transcriptToWire(state.sessions.get(pathParam(context, "session_id"))),
        );
      },
    },
    {
      method: "POST",
      path: "/admin/v1/sessions/:session_id/terminate",
      handler: async (context) => {
        admin(context);
        await readJson(context.request, emptyBodySchema, "terminate body", limits.maxBodyBytes);
        state.sessions.terminate(pathParam(context, "session_id"));
        sendJson(
          context.response,
          200,
          sessionSchema,
          sessionToWire(state.sessions.get(pathParam(context, "session_id"))),
        );
      },
    },
    {
      method: "GET",
      path: "/admin/v1/work",
      handler: (context) => {
        admin(context);
        const query = parseQuery(context.url, adminWorkQuerySchema, "work query");
        if (query.environment_id !== undefined) state.environment(query.environment_id);
        sendJson(context.response, 200, workListSchema, {
          data: state.work.list(query.environment_id).map((work) => toWire(work, false)),
          next_page: null,
        });
      },
    },
    workAction("stop", adminStopBodySchema, (work, body) =>
      state.work.stop(work.environmentId, work.id, { force: body.force, by: "operator" }),
    ),
    workAction("take-over-lease", emptyBodySchema, (work) =>
      state.work.takeOverLease(work.environmentId, work.id),
    ),
    workAction("expire-lease", emptyBodySchema, (work) =>
      state.work.expireLease(work.environmentId, work.id),
    ),
    {
      method: "POST",
      path: "/admin/v1/files",
      handler: async (context) => {
        admin(context);
        const query = parseQuery(context.url, uploadFileQuerySchema, "upload file query");
        const bytes = await readBody(context.request, limits.maxBodyBytes);
        const file = state.uploadFile({
          filename: query.filename,
          mimeType: query.mime_type,
          bytes,
        });
        sendJson(context.response, 201, fileCreatedSchema, {
          type: "file",
          id: file.id,
          filename: file.filename,
          mime_type: file.mimeType,
          size_bytes: file.bytes.length,
          created_at: rfc3339(file.createdAt),
        });
      },
    },
    {
      method: "POST",
      path: "/admin/v1/skills",
      handler: async (context) => {
        admin(context);
        const query = parseQuery(context.url, uploadSkillQuerySchema, "upload skill query");
        const archive = await readBody(context.request, limits.maxBodyBytes);
        const version = state.skills.upload({
          ...(query.skill_id !== undefined ? { skillId: query.skill_id } : {}),
          name: query.name,
          description: query.description,
          archive,
        });
        sendJson(context.response, 201, skillVersionSchema, skillVersionToWire(version));
      },
    },
    {
      method: "GET",
      path: "/admin/v1/webhooks/deliveries",
      handler: (context) => {
        admin(context);
        const deliveries = state.webhooks?.deliveries() ?? [];
        sendJson(context.response, 200, deliveriesSchema, {
          data: deliveries.map((delivery) => ({
            webhook_id: delivery.webhookId,
            session_id: delivery.sessionId,
            work_id: delivery.workId,
            status: delivery.status,
            error: delivery.error,
          })),
        });
      },
    },
  ];
}
