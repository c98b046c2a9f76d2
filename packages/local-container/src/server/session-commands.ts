import { randomBytes } from "node:crypto";
import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { LocalContainer } from "./container-registry.js";
import {
  type SessionShell,
  type ShellCommandOptions,
  type ShellResult,
  startSessionShell,
} from "./session-shell.js";
import type { SessionState } from "./sessions.js";

/** The session's shell, started on first use; a shell that exits takes the session with it. */
export function sessionShell(
  container: LocalContainer,
  session: SessionState,
  maxOutputBytes: number,
): Promise<SessionShell> {
  if (session.shell === undefined) {
    const started = startSessionShell(
      container,
      session.id,
      session.cwd,
      session.env,
      maxOutputBytes,
    );
    session.shell = started;
    void started.then(
      (shell) => shell.ended.then(() => container.sessions.discard(session)),
      () => container.sessions.discard(session),
    );
  }
  return session.shell;
}

/** Runs a foreground command in the session's shell, after the session's earlier commands. */
export function runInSession(
  container: LocalContainer,
  session: SessionState,
  command: string,
  options: ShellCommandOptions,
  maxOutputBytes: number,
): Promise<ShellResult> {
  return session.exclusive(async () => {
    const shell = await sessionShell(container, session, maxOutputBytes);
    const result = await shell.run(command, {
      ...options,
      timeoutMs: options.timeoutMs ?? session.commandTimeoutMs,
    });
    session.cwd = result.cwd;
    return result;
  });
}

/**
 * Writes the session shell's variables, functions and aliases to a file a new command sources (see
 * `startCommand`), and returns its container path and the shell's cwd. The caller holds the session's turn.
 */
export async function snapshotSession(
  container: LocalContainer,
  session: SessionState,
  maxOutputBytes: number,
): Promise<{ snapshot: string; cwd: string }> {
  const shell = await sessionShell(container, session, maxOutputBytes);
  const snapshot = `${shell.directory}/${randomBytes(8).toString("hex")}.state`;
  const result = await shell.run(
    `{ declare -p; declare -f; alias -p; } > ${shellQuote(snapshot)} 2>/dev/null`,
    {},
  );
  session.cwd = result.cwd;
  return { snapshot, cwd: result.cwd };
}

/** `export` lines for per-call variables, run after a snapshot so they win over the session's values. */
export function exportLines(env: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(env ?? {})
    .filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join("");
}
