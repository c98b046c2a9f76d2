import type { ScriptedToolCall } from "../wire/admin-schemas.js";

/** A scripted user turn: a message and the tool calls the agent answers it with, one at a time. */
export interface Turn {
  readonly id: string;
  readonly message: string;
  readonly script: readonly ScriptedToolCall[];
  readonly finalMessage?: string;
  /** How the session shows the worker which calls it waits on (see `queueTurnBodySchema`). */
  readonly gate: "evaluated_permission" | "requires_action";
  /** Index of the next tool call to emit. */
  next: number;
  /** Id of the `agent.tool_use` event awaiting its `user.tool_result`. */
  outstanding: string | null;
  state: "pending" | "running" | "done";
  /** Work items queued for this turn: one, plus one per resumption after an item stopped early. */
  readonly workIds: string[];
}

/** One tool call of a session and its result, as the transcript records it. */
export interface TranscriptEntry {
  readonly turnId: string;
  readonly toolUseId: string;
  readonly name: ScriptedToolCall["name"];
  readonly input: Readonly<Record<string, unknown>>;
  /** The platform's verdict: a denied call is never run nor answered, and the turn moves past it. */
  readonly permission: ScriptedToolCall["permission"];
  /** The work item that was current when the call was emitted. */
  readonly workId: string | null;
  readonly requestedAt: string;
  result: { readonly content: readonly unknown[]; readonly isError: boolean } | null;
  answeredAt: string | null;
}
