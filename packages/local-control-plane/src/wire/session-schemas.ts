import * as z from "zod";

const alwaysAllow = z.object({ type: z.literal("always_allow") }).strict();

const toolConfig = <N extends "bash" | "read" | "write" | "edit" | "glob" | "grep">(name: N) =>
  z
    .object({
      type: z.literal(name),
      name: z.literal(name),
      enabled: z.boolean(),
      permission_policy: alwaysAllow,
    })
    .strict();

/** The agent toolset the scripted agent declares (`BetaManagedAgentsAgentToolset20260401`). */
const agentToolsetSchema = z
  .object({
    type: z.literal("agent_toolset_20260401"),
    configs: z.array(
      z.discriminatedUnion("type", [
        toolConfig("bash"),
        toolConfig("read"),
        toolConfig("write"),
        toolConfig("edit"),
        toolConfig("glob"),
        toolConfig("grep"),
      ]),
    ),
    default_config: z.object({ enabled: z.boolean(), permission_policy: alwaysAllow }).strict(),
  })
  .strict();

const skillSchema = z
  .object({ type: z.enum(["anthropic", "custom"]), skill_id: z.string(), version: z.string() })
  .strict();

/** A session's file resource (`BetaManagedAgentsFileResource`). */
export const fileResourceSchema = z
  .object({
    type: z.literal("file"),
    id: z.string(),
    file_id: z.string(),
    mount_path: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .strict();

/** `BetaManagedAgentsSession`, as far as the local control plane fills it. */
export const sessionSchema = z
  .object({
    id: z.string(),
    type: z.literal("session"),
    agent: z
      .object({
        id: z.string(),
        type: z.literal("agent"),
        name: z.string(),
        description: z.string().nullable(),
        execution_identity: z.object({ type: z.literal("service_account") }).strict(),
        mcp_servers: z.array(z.never()),
        model: z.object({ id: z.string() }).strict(),
        multiagent: z.null(),
        skills: z.array(skillSchema),
        system: z.string().nullable(),
        tools: z.array(agentToolsetSchema),
        version: z.number().int(),
      })
      .strict(),
    archived_at: z.string().nullable(),
    budget: z.null(),
    created_at: z.string(),
    updated_at: z.string(),
    environment_id: z.string(),
    metadata: z.record(z.string(), z.string()),
    outcome_evaluations: z.array(z.never()),
    resources: z.array(fileResourceSchema),
    stats: z
      .object({ active_seconds: z.number().optional(), duration_seconds: z.number().optional() })
      .strict(),
    status: z.enum(["rescheduling", "running", "idle", "terminated"]),
    title: z.string().nullable(),
    usage: z.object({}).strict(),
    vault_ids: z.array(z.string()),
  })
  .strict();
/** Wire form of a session. */
export type SessionWire = z.output<typeof sessionSchema>;
