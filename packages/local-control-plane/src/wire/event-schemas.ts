import * as z from "zod";

/** A text content block (`BetaManagedAgentsTextBlock`). */
export const textBlockSchema = z.object({ type: z.literal("text"), text: z.string() }).strict();

/** An image content block (`BetaManagedAgentsImageBlock`), e.g. from the read tool on a picture. */
export const imageBlockSchema = z
  .object({
    type: z.literal("image"),
    source: z.discriminatedUnion("type", [
      z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() }).strict(),
      z.object({ type: z.literal("url"), url: z.string().min(1) }).strict(),
      z.object({ type: z.literal("file"), file_id: z.string().min(1) }).strict(),
    ]),
  })
  .strict();

/** Content a tool result may carry here: text and images. Documents and search results are refused. */
const resultBlockSchema = z.discriminatedUnion("type", [textBlockSchema, imageBlockSchema]);

const eventBase = { id: z.string(), processed_at: z.string() };

/** `agent.tool_use`: a builtin tool call of the scripted agent. */
export const agentToolUseEventSchema = z
  .object({ ...eventBase, type: z.literal("agent.tool_use"), name: z.string(), input: z.record(z.string(), z.unknown()), evaluated_permission: z.literal("allow") })
  .strict();

/** `agent.message`: text of the scripted agent. */
export const agentMessageEventSchema = z.object({ ...eventBase, type: z.literal("agent.message"), content: z.array(textBlockSchema) }).strict();

/** `session.status_running`. */
export const statusRunningEventSchema = z.object({ ...eventBase, type: z.literal("session.status_running") }).strict();

/** `session.status_idle`. The local control plane idles with `end_turn`. */
export const statusIdleEventSchema = z
  .object({ ...eventBase, type: z.literal("session.status_idle"), stop_reason: z.object({ type: z.literal("end_turn") }).strict(), stop_details: z.null() })
  .strict();

/** `session.status_terminated`. */
export const statusTerminatedEventSchema = z.object({ ...eventBase, type: z.literal("session.status_terminated") }).strict();

/** `user.message`. */
export const userMessageEventSchema = z.object({ ...eventBase, type: z.literal("user.message"), content: z.array(textBlockSchema) }).strict();

/** `user.tool_result`, as stored. */
export const userToolResultEventSchema = z
  .object({ ...eventBase, type: z.literal("user.tool_result"), tool_use_id: z.string(), content: z.array(resultBlockSchema).optional(), is_error: z.boolean().nullable().optional() })
  .strict();

/** `user.interrupt`, as stored. */
export const userInterruptEventSchema = z.object({ ...eventBase, type: z.literal("user.interrupt") }).strict();

/** Every event the local control plane stores and streams. */
export const sessionEventSchema = z.discriminatedUnion("type", [
  agentToolUseEventSchema,
  agentMessageEventSchema,
  statusRunningEventSchema,
  statusIdleEventSchema,
  statusTerminatedEventSchema,
  userMessageEventSchema,
  userToolResultEventSchema,
  userInterruptEventSchema,
]);
/** A stored session event. */
export type SessionEventWire = z.output<typeof sessionEventSchema>;

/** Event params a client may send (`BetaManagedAgentsEventParams`, the kinds the local control plane accepts). */
export const eventParamsSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("user.tool_result"), tool_use_id: z.string().min(1), content: z.array(resultBlockSchema).optional(), is_error: z.boolean().nullable().optional() }).strict(),
  z.object({ type: z.literal("user.message"), content: z.array(textBlockSchema).min(1) }).strict(),
  z.object({ type: z.literal("user.interrupt") }).strict(),
]);
/** One accepted event param. */
export type EventParams = z.output<typeof eventParamsSchema>;

/** Body of `POST /v1/sessions/{id}/events` (`EventSendParams` without header params). */
export const sendEventsBodySchema = z.object({ events: z.array(eventParamsSchema).min(1).max(100) }).strict();

/** The events a client's send stores. */
export const userEventSchema = z.discriminatedUnion("type", [userMessageEventSchema, userToolResultEventSchema, userInterruptEventSchema]);
/** A stored user event. */
export type UserEventWire = z.output<typeof userEventSchema>;

/** Response of `POST /v1/sessions/{id}/events` (`BetaManagedAgentsSendSessionEvents`). */
export const sendEventsResponseSchema = z.object({ data: z.array(userEventSchema) }).strict();

/** Response of `GET /v1/sessions/{id}/events` (a `PageCursor` page). */
export const eventListSchema = z.object({ data: z.array(sessionEventSchema), next_page: z.string().nullable() }).strict();

/** Query of `GET /v1/sessions/{id}/events`. */
export const eventListQuerySchema = z
  .object({
    limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(1000)).optional(),
    page: z.string().regex(/^\d+$/, "must be a cursor this server issued").optional(),
    order: z.enum(["asc", "desc"]).optional(),
  })
  .strict();
