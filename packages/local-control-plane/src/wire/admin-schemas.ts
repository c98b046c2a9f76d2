import * as z from "zod";

const metadata = z.record(z.string(), z.string()).default({});

/** Body of `POST /admin/v1/environments`. */
export const createEnvironmentBodySchema = z
  .object({ name: z.string().min(1).max(256).default("local"), metadata })
  .strict();

/** The agent toolset's tool names: what a scripted turn may call. */
export const toolNameSchema = z.enum(["bash", "read", "write", "edit", "glob", "grep"]);

/**
 * One scripted tool call of a turn. `permission` is the platform's verdict on it: `allow` (the default) lets
 * the worker run it; `deny` refuses it on the platform's side, so the worker must neither run nor answer it.
 */
export const toolCallSchema = z
  .object({
    name: toolNameSchema,
    input: z.record(z.string(), z.unknown()),
    permission: z.enum(["allow", "deny"]).default("allow"),
  })
  .strict();
/** A scripted tool call (`permission` defaults to `allow`). */
export type ToolCall = z.input<typeof toolCallSchema>;
/** A scripted tool call with its defaults applied. */
export type ScriptedToolCall = z.output<typeof toolCallSchema>;
/** How a turn's session gates its calls (see `queueTurnBodySchema`). */
export type ToolCallGate = z.output<typeof queueTurnBodySchema>["gate"];

/** Body of `POST /admin/v1/sessions`. */
export const createSessionBodySchema = z
  .object({
    environment_id: z.string().min(1),
    title: z.string().max(512).nullable().default(null),
    metadata,
    /** Files attached as session resources; ids from `POST /admin/v1/files`. */
    files: z
      .array(z.object({ file_id: z.string().min(1), mount_path: z.string().min(1) }).strict())
      .default([]),
    /** Skills of the session's agent; ids from `POST /admin/v1/skills`. */
    skills: z
      .array(
        z
          .object({ skill_id: z.string().min(1), version: z.string().min(1).default("latest") })
          .strict(),
      )
      .default([]),
  })
  .strict();

/** Body of `POST /admin/v1/sessions/{id}/turns`: a user message and the tool calls the scripted agent answers it with. */
export const queueTurnBodySchema = z
  .object({
    message: z.string().default("(scripted turn)"),
    tool_calls: z.array(toolCallSchema).max(1000),
    /** Text the agent says before going idle. */
    final_message: z.string().optional(),
    /**
     * How the session tells the worker which allowed calls it waits on: `evaluated_permission` puts the verdict
     * on each `agent.tool_use`; `requires_action` sends the call without one and idles with a
     * `requires_action` stop reason listing it, resuming (`session.status_running`) once it is answered.
     */
    gate: z.enum(["evaluated_permission", "requires_action"]).default("evaluated_permission"),
  })
  .strict();

/** Query of `POST /admin/v1/skills`: the body is the skill's zip or tar archive. */
export const uploadSkillQuerySchema = z
  .object({
    name: z.string().min(1).max(64),
    description: z.string().max(1024).default(""),
    skill_id: z.string().min(1).optional(),
  })
  .strict();

/** Query of `POST /admin/v1/files`. */
export const uploadFileQuerySchema = z
  .object({
    filename: z.string().min(1).max(255),
    mime_type: z.string().min(1).default("application/octet-stream"),
  })
  .strict();

/** Response of `POST /admin/v1/environments`: the only place the environment key is handed out. */
export const environmentCreatedSchema = z
  .object({
    type: z.literal("environment"),
    id: z.string(),
    name: z.string(),
    metadata: z.record(z.string(), z.string()),
    environment_key: z.string(),
    created_at: z.string(),
  })
  .strict();

/** A queued turn, as the admin API reports it. */
export const turnSchema = z
  .object({
    type: z.literal("turn"),
    id: z.string(),
    session_id: z.string(),
    state: z.enum(["pending", "running", "done"]),
    gate: z.enum(["evaluated_permission", "requires_action"]),
    tool_calls: z.number().int().nonnegative(),
    work_ids: z.array(z.string()),
  })
  .strict();

/** One transcript entry: a tool call and its result. */
export const transcriptEntrySchema = z
  .object({
    turn_id: z.string(),
    tool_use_id: z.string(),
    name: toolNameSchema,
    input: z.record(z.string(), z.unknown()),
    permission: z.enum(["allow", "deny"]),
    work_id: z.string().nullable(),
    requested_at: z.string(),
    answered_at: z.string().nullable(),
    result: z
      .object({ content: z.array(z.unknown()), is_error: z.boolean() })
      .strict()
      .nullable(),
  })
  .strict();

/** Response of `GET /admin/v1/sessions/{id}/transcript`. */
export const transcriptSchema = z
  .object({
    session_id: z.string(),
    status: z.enum(["rescheduling", "running", "idle", "terminated"]),
    entries: z.array(transcriptEntrySchema),
  })
  .strict();

/** Response of `POST /admin/v1/files`. */
export const fileCreatedSchema = z
  .object({
    type: z.literal("file"),
    id: z.string(),
    filename: z.string(),
    mime_type: z.string(),
    size_bytes: z.number().int().nonnegative(),
    created_at: z.string(),
  })
  .strict();

/** Body of `POST /admin/v1/work/{id}/stop`: an operator's stop (graceful unless `force`). */
export const adminStopBodySchema = z.object({ force: z.boolean().default(false) }).strict();

/** Query of `GET /admin/v1/work`. */
export const adminWorkQuerySchema = z
  .object({ environment_id: z.string().min(1).optional() })
  .strict();

/** Response of `GET /admin/v1/webhooks/deliveries`. */
export const deliveriesSchema = z
  .object({
    data: z.array(
      z
        .object({
          webhook_id: z.string(),
          session_id: z.string(),
          work_id: z.string(),
          status: z.number().int().nullable(),
          error: z.string().nullable(),
        })
        .strict(),
    ),
  })
  .strict();
