import { createError } from "@open-managed-agents/runtime-resource-contract";
import type { ControlPlaneObserver } from "../events.js";
import type { ScriptedToolCall } from "../wire/admin-schemas.js";
import type { EventParams, SessionEventWire, UserEventWire } from "../wire/event-schemas.js";
import type { SessionWire } from "../wire/session-schemas.js";
import type { Clock } from "./clock.js";
import { newId, rfc3339 } from "./ids.js";
import type { TranscriptEntry, Turn } from "./turn.js";

/** A session as the control plane keeps it. */
export interface SessionRecord {
  readonly id: string;
  readonly environmentId: string;
  readonly createdAt: number;
  readonly title: string | null;
  readonly metadata: Record<string, string>;
  readonly files: readonly {
    readonly fileId: string;
    readonly mountPath: string;
    readonly resourceId: string;
  }[];
  /** Skills of the session's agent, as `{skillId, version}` (a version id or `latest`). */
  readonly skills: readonly { readonly skillId: string; readonly version: string }[];
  status: SessionWire["status"];
  updatedAt: number;
  readonly events: SessionEventWire[];
  readonly subscribers: Set<(event: SessionEventWire) => void>;
  readonly turns: Turn[];
  readonly transcript: TranscriptEntry[];
}

/** Options of {@link createSessions}. */
export interface SessionsOptions {
  readonly clock: Clock;
  /** Queues the work item of a turn that starts (or resumes after its item stopped early); returns its id. */
  readonly queueWork: (session: SessionRecord) => string;
  /** Whether the session still has a work item that is not stopped. */
  readonly hasLiveWork: (session: SessionRecord) => boolean;
  readonly observe: ControlPlaneObserver;
}

/** Sessions, their event log and the scripted agent that drives each turn. */
export function createSessions(options: SessionsOptions) {
  const sessions = new Map<string, SessionRecord>();

  const append = <E extends SessionEventWire>(session: SessionRecord, event: E): E => {
    session.events.push(event);
    session.updatedAt = options.clock();
    for (const subscriber of session.subscribers) subscriber(event);
    return event;
  };
  const stamp = () => ({ id: newId("sevt"), processed_at: rfc3339(options.clock()) });

  const current = (session: SessionRecord) =>
    session.turns.find((turn) => turn.state === "running");

  /**
   * Emits the scripted tool calls up to the next one the worker must answer, then waits for its result; a
   * denied call is resolved by the platform at once. With the `requires_action` gate an allowed call goes out
   * without a verdict and the session idles listing it. When the script is done the turn ends (`end_turn`).
   */
  const advance = (session: SessionRecord, turn: Turn) => {
    for (let call = turn.script[turn.next]; call; call = turn.script[turn.next]) {
      const gated = call.permission === "allow" && turn.gate === "requires_action";
      const verdict = gated ? {} : { evaluated_permission: call.permission };
      const event = append(session, {
        ...stamp(),
        type: "agent.tool_use",
        name: call.name,
        input: call.input,
        ...verdict,
      });
      options.observe({
        type: "tool_use",
        sessionId: session.id,
        turnId: turn.id,
        toolUseId: event.id,
        name: call.name,
      });
      session.transcript.push({
        turnId: turn.id,
        toolUseId: event.id,
        name: call.name,
        input: call.input,
        permission: call.permission,
        result: null,
        requestedAt: event.processed_at,
        answeredAt: null,
        workId: turn.workIds.at(-1) ?? null,
      });
      if (call.permission === "deny") {
        turn.next += 1;
        continue;
      }
      turn.outstanding = event.id;
      if (gated) {
        session.status = "idle";
        const stopReason = { type: "requires_action" as const, event_ids: [event.id] };
        append(session, {
          ...stamp(),
          type: "session.status_idle",
          stop_reason: stopReason,
          stop_details: null,
        });
      }
      return;
    }
    finish(session, turn);
  };

  const finish = (session: SessionRecord, turn: Turn) => {
    turn.outstanding = null;
    turn.state = "done";
    if (turn.finalMessage !== undefined)
      append(session, {
        ...stamp(),
        type: "agent.message",
        content: [{ type: "text", text: turn.finalMessage }],
      });
    session.status = "idle";
    append(session, {
      ...stamp(),
      type: "session.status_idle",
      stop_reason: { type: "end_turn" },
      stop_details: null,
    });
    options.observe({ type: "turn_ended", sessionId: session.id, turnId: turn.id });
  };

  /** Starts the oldest pending turn once the previous turn is done and its work item has stopped. */
  const startNext = (session: SessionRecord) => {
    if (session.status === "terminated" || current(session) || options.hasLiveWork(session)) return;
    const turn = session.turns.find((candidate) => candidate.state === "pending");
    if (!turn) return;
    turn.state = "running";
    const workId = options.queueWork(session);
    turn.workIds.push(workId);
    options.observe({
      type: "turn_started",
      sessionId: session.id,
      turnId: turn.id,
      workId: turn.workIds[0] ?? workId,
    });
    session.status = "running";
    append(session, {
      ...stamp(),
      type: "user.message",
      content: [{ type: "text", text: turn.message }],
    });
    append(session, { ...stamp(), type: "session.status_running" });
    advance(session, turn);
  };

  const get = (sessionId: string): SessionRecord => {
    const session = sessions.get(sessionId);
    if (!session)
      throw createError("not_found", {
        message: `session ${sessionId} not found`,
        context: { sessionId },
      });
    return session;
  };

  const receive = (session: SessionRecord, params: EventParams): UserEventWire => {
    const turn = current(session);
    if (params.type === "user.message") {
      // A free-form message gets an empty scripted answer: the agent has no model.
      const event = append(session, { ...stamp(), type: "user.message", content: params.content });
      return event;
    }
    if (params.type === "user.interrupt") {
      const event = append(session, { ...stamp(), type: "user.interrupt" });
      if (turn) finish(session, turn);
      return event;
    }
    const entry = session.transcript.find(
      (candidate) => candidate.toolUseId === params.tool_use_id,
    );
    if (!entry)
      throw createError("invalid_request", {
        message: `tool_use_id ${params.tool_use_id} names no tool call of session ${session.id}`,
        context: { sessionId: session.id },
      });
    if (entry.result !== null) {
      // A send retried after its response was lost repeats the same result: answer it with the stored event.
      const stored = session.events.find(
        (event): event is Extract<UserEventWire, { type: "user.tool_result" }> =>
          event.type === "user.tool_result" && event.tool_use_id === params.tool_use_id,
      );
      const same =
        stored &&
        JSON.stringify(stored.content ?? []) === JSON.stringify(params.content ?? []) &&
        (stored.is_error ?? false) === (params.is_error ?? false);
      if (same) return stored;
      throw createError("fence_conflict", {
        message: `tool call ${params.tool_use_id} was already answered with another result`,
        context: { sessionId: session.id },
      });
    }
    const event = append(session, {
      ...stamp(),
      type: "user.tool_result",
      tool_use_id: params.tool_use_id,
      ...(params.content ? { content: params.content } : {}),
      is_error: params.is_error ?? false,
    });
    entry.result = { content: params.content ?? [], isError: params.is_error ?? false };
    entry.answeredAt = event.processed_at;
    options.observe({
      type: "tool_result",
      sessionId: session.id,
      toolUseId: params.tool_use_id,
      isError: params.is_error ?? false,
    });
    if (turn && turn.outstanding === params.tool_use_id) {
      turn.next += 1;
      if (session.status === "idle") {
        // The answer to a `requires_action` idle resumes the session.
        session.status = "running";
        append(session, { ...stamp(), type: "session.status_running" });
      }
      advance(session, turn);
    }
    return event;
  };

  return {
    create(input: {
      environmentId: string;
      title: string | null;
      metadata: Record<string, string>;
      files: readonly { fileId: string; mountPath: string }[];
      skills: readonly { skillId: string; version: string }[];
    }): SessionRecord {
      const now = options.clock();
      const session: SessionRecord = {
        id: newId("sesn"),
        environmentId: input.environmentId,
        createdAt: now,
        updatedAt: now,
        title: input.title,
        metadata: { ...input.metadata },
        files: input.files.map((file) => ({ ...file, resourceId: newId("sesrsc") })),
        skills: input.skills.map((skill) => ({ ...skill })),
        status: "idle",
        events: [],
        subscribers: new Set(),
        turns: [],
        transcript: [],
      };
      sessions.set(session.id, session);
      return session;
    },
    get,
    /** Queues a scripted turn; it starts when the session is idle and holds no live work item. */
    queueTurn(
      sessionId: string,
      input: {
        message: string;
        toolCalls: readonly ScriptedToolCall[];
        finalMessage?: string;
        gate?: Turn["gate"];
      },
    ): Turn {
      const session = get(sessionId);
      if (session.status === "terminated")
        throw createError("invalid_request", {
          message: `session ${sessionId} is terminated`,
          context: { sessionId },
        });
      const turn: Turn = {
        id: newId("turn"),
        message: input.message,
        script: [...input.toolCalls],
        ...(input.finalMessage !== undefined ? { finalMessage: input.finalMessage } : {}),
        gate: input.gate ?? "evaluated_permission",
        next: 0,
        outstanding: null,
        state: "pending",
        workIds: [],
      };
      session.turns.push(turn);
      startNext(session);
      return turn;
    },
    receive,
    /** A work item of the session stopped: resume an unfinished turn with a new item, or start the next turn. */
    workStopped(sessionId: string) {
      const session = sessions.get(sessionId);
      if (!session || session.status === "terminated") return;
      const turn = current(session);
      if (turn && !options.hasLiveWork(session)) turn.workIds.push(options.queueWork(session));
      else startNext(session);
    },
    terminate(sessionId: string) {
      const session = get(sessionId);
      if (session.status === "terminated") return;
      const turn = current(session);
      if (turn) turn.state = "done";
      session.status = "terminated";
      append(session, { ...stamp(), type: "session.status_terminated" });
    },
    all: () => [...sessions.values()],
  };
}

/** The sessions module's type. */
export type Sessions = ReturnType<typeof createSessions>;

const toolConfig = <N extends ScriptedToolCall["name"]>(name: N) => ({
  type: name,
  name,
  enabled: true,
  permission_policy: { type: "always_allow" as const },
});

/** Wire form of a session. */
export function sessionToWire(session: SessionRecord): SessionWire {
  return {
    id: session.id,
    type: "session",
    agent: {
      id: "agent_local_scripted",
      type: "agent",
      name: "scripted agent",
      description: "Emits the tool calls its turns were scripted with; there is no model.",
      execution_identity: { type: "service_account" },
      mcp_servers: [],
      model: { id: "scripted" },
      multiagent: null,
      skills: session.skills.map((skill) => ({
        type: "custom" as const,
        skill_id: skill.skillId,
        version: skill.version,
      })),
      system: null,
      tools: [
        {
          type: "agent_toolset_20260401",
          configs: [
            toolConfig("bash"),
            toolConfig("read"),
            toolConfig("write"),
            toolConfig("edit"),
            toolConfig("glob"),
            toolConfig("grep"),
          ],
          default_config: { enabled: true, permission_policy: { type: "always_allow" } },
        },
      ],
      version: 1,
    },
    archived_at: null,
    budget: null,
    created_at: rfc3339(session.createdAt),
    updated_at: rfc3339(session.updatedAt),
    environment_id: session.environmentId,
    metadata: { ...session.metadata },
    outcome_evaluations: [],
    resources: session.files.map((file) => ({
      type: "file",
      id: file.resourceId,
      file_id: file.fileId,
      mount_path: file.mountPath,
      created_at: rfc3339(session.createdAt),
      updated_at: rfc3339(session.createdAt),
    })),
    stats: {},
    status: session.status,
    title: session.title,
    usage: {},
    vault_ids: [],
  };
}
