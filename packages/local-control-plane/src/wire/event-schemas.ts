import * as z from "zod";

/** A text content block (`BetaManagedAgentsTextBlock`). */
export const textBlockSchema = z.object({ type: z.literal("text"), text: z.string() }).strict();

/** An image content block (`BetaManagedAgentsImageBlock`), e.g. from the read tool on a picture. */
export const imageBlockSchema = z
  .object({
    type: z.literal("image"),
    source: z.discriminatedUnion("type", [
      z
        .object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() })
        .strict(),
      z.object({ type: z.literal("url"), url: z.string().min(1) }).strict(),
      z.object({ type: z.literal("file"), file_id: z.string().min(1) }).strict(),
    ]),
  })
  .strict();

/** Content a tool result may carry here: text and images. Documents and search results are refused. */
const resultBlockSchema = z.discriminatedUnion("type", [textBlockSchema, imageBlockSchema]);

const eventBase = { id: z.string(), processed_at: z.string() };

/**
 * The platform's verdict on a tool call (`BetaManagedAgentsAgentEvaluatedPermission`). The local control plane
 * sends `allow` and `deny`; `ask` needs a `user.tool_confirmation`, which it does not model.
 */
export const evaluatedPermissionSchema = z.enum(["allow", "deny"]);
/** A verdict the local control plane sends. */
export type EvaluatedPermission = z.output<typeof evaluatedPermissionSchema>;

/**
 * `agent.tool_use`: a builtin tool call of the scripted agent. It carries `evaluated_permission` when the
 * turn's calls are gated by permission evaluation, and none when a `requires_action` idle lists it instead.
 */
export const agentToolUseEventSchema = z
  .object({
    ...eventBase,
    type: z.literal("agent.tool_use"),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
    evaluated_permission: evaluatedPermissionSchema.optional(),
  })
  .strict();

/** `agent.message`: text of the scripted agent. */
export const agentMessageEventSchema = z
  .object({ ...eventBase, type: z.literal("agent.message"), content: z.array(textBlockSchema) })
  .strict();

/** `session.status_running`. */
export const statusRunningEventSchema = z
  .object({ ...eventBase, type: z.literal("session.status_running") })
  .strict();

/** Why the session idled: its turn ended, or it waits on the listed tool calls (`requires_action`). */
export const stopReasonSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("end_turn") }).strict(),
  z.object({ type: z.literal("requires_action"), event_ids: z.array(z.string()).min(1) }).strict(),
]);

/** `session.status_idle`, with `end_turn` or `requires_action`. */
export const statusIdleEventSchema = z
  .object({
    ...eventBase,
    type: z.literal("session.status_idle"),
    stop_reason: stopReasonSchema,
    stop_details: z.null(),
  })
  .strict();

/** `session.status_terminated`. */
export const statusTerminatedEventSchema = z
  .object({ ...eventBase, type: z.literal("session.status_terminated") })
  .strict();

/** `user.message`. */
export const userMessageEventSchema = z
  .object({ ...eventBase, type: z.literal("user.message"), content: z.array(textBlockSchema) })
  .strict();

/** `user.tool_result`, as stored. */
export const userToolResultEventSchema = z
  .object({
    ...eventBase,
    type: z.literal("user.tool_result"),
    tool_use_id: z.string(),
    content: z.array(resultBlockSchema).optional(),
    is_error: z.boolean().nullable().optional(),
  })
  .strict();

/** `user.interrupt`, as stored. */
export const userInterruptEventSchema = z
  .object({ ...eventBase, type: z.literal("user.interrupt") })
  .strict();

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
  z
    .object({
      type: z.literal("user.tool_result"),
      tool_use_id: z.string().min(1),
      content: z.array(resultBlockSchema).optional(),
      is_error: z.boolean().nullable().optional(),
    })
    .strict(),
  z.object({ type: z.literal("user.message"), content: z.array(textBlockSchema).min(1) }).strict(),
  z.object({ type: z.literal("user.interrupt") }).strict(),
]);
/** One accepted event param. */
export type EventParams = z.output<typeof eventParamsSchema>;

/** Body of `POST /v1/sessions/{id}/events` (`EventSendParams` without header params). */
export const sendEventsBodySchema = z
  .object({ events: z.array(eventParamsSchema).min(1).max(100) })
  .strict();

/** The events a client's send stores. */
export const userEventSchema = z.discriminatedUnion("type", [
  userMessageEventSchema,
  userToolResultEventSchema,
  userInterruptEventSchema,
]);
/** A stored user event. */
export type UserEventWire = z.output<typeof userEventSchema>;

/** Response of `POST /v1/sessions/{id}/events` (`BetaManagedAgentsSendSessionEvents`). */
export const sendEventsResponseSchema = z.object({ data: z.array(userEventSchema) }).strict();

/** Response of `GET /v1/sessions/{id}/events` (a `PageCursor` page). */
export const eventListSchema = z
  .object({ data: z.array(sessionEventSchema), next_page: z.string().nullable() })
  .strict();

/** `BetaManagedAgentsSessionEventType`: every event type a history read may filter on (SDK 1.14 to 1.17). */
export const sessionEventTypeSchema = z.enum([
  "user.message",
  "user.interrupt",
  "user.tool_confirmation",
  "user.custom_tool_result",
  "agent.custom_tool_use",
  "agent.message",
  "agent.thinking",
  "agent.mcp_tool_use",
  "agent.mcp_tool_result",
  "agent.tool_use",
  "agent.tool_result",
  "agent.thread_message_received",
  "agent.thread_message_sent",
  "agent.thread_context_compacted",
  "session.error",
  "session.status_rescheduled",
  "session.status_running",
  "session.status_idle",
  "session.status_terminated",
  "session.thread_created",
  "span.outcome_evaluation_start",
  "span.outcome_evaluation_end",
  "span.model_request_start",
  "span.model_request_end",
  "span.outcome_evaluation_ongoing",
  "user.define_outcome",
  "session.thread_status_running",
  "session.thread_status_idle",
  "session.thread_status_terminated",
  "user.tool_result",
  "session.thread_status_rescheduled",
  "session.updated",
  "system.message",
  "session.usage",
  "workflow_run.created",
  "workflow_run.status_running",
  "workflow_run.status_idle",
  "workflow_run.status_ended",
  "workflow_run.error",
  "workflow_run.phase_started",
  "workflow_run.phase_ended",
]);

/** An RFC 3339 timestamp as a query value, parsed to epoch milliseconds. */
const instantParam = z.iso.datetime({ offset: true }).transform((value) => Date.parse(value));

/** A value the SDK sends as `key=` for a parameter its types allow to be `null`: the same as leaving it out. */
const nullParam = z.literal("").transform(() => undefined);

/** Query of `GET /v1/sessions/{id}/events` (`EventListParams`: paging, order, types, `created_at` range). */
export const eventListQuerySchema = z
  .object({
    limit: z
      .string()
      .regex(/^\d+$/)
      .transform(Number)
      .pipe(z.number().int().min(1).max(1000))
      .optional(),
    page: z
      .union([nullParam, z.string().regex(/^\d+$/, "must be a cursor this server issued")])
      .optional(),
    order: z.enum(["asc", "desc"]).optional(),
    types: z.array(sessionEventTypeSchema).min(1).optional(),
    "created_at[gt]": instantParam.optional(),
    "created_at[gte]": instantParam.optional(),
    "created_at[lt]": instantParam.optional(),
    "created_at[lte]": instantParam.optional(),
  })
  .strict();
/** A parsed event list query. */
export type EventListQuery = z.output<typeof eventListQuerySchema>;

/** Query of `GET /v1/sessions/{id}/events/stream` (`EventStreamParams`). */
export const eventStreamQuerySchema = z
  .object({
    event_deltas: z
      .array(z.enum(["agent.message", "agent.thinking"]))
      .min(1)
      .optional(),
  })
  .strict();
