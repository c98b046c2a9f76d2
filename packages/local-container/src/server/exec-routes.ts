import type { MappedProcess } from "@open-managed-agents/sandbox/local-process";
import { type RunningCommand, containerPath, exitCodeOf, isDirectory, startCommand } from "./command-runner.js";
import type { LocalContainer } from "./container-registry.js";
import { createOutputBuffer } from "./output-buffer.js";
import type { ProcessEvent } from "./process-table.js";
import { readJson } from "./request-body.js";
import { type ExecuteRequest, SESSIONLESS_ID, executeRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import type { SessionState } from "./sessions.js";
import { ControlApiError, now, openSse, sendJson } from "./wire.js";

/** Exit code and message of a command stopped by its `timeoutMs`, as the rpc transport reports it. */
const TIMEOUT_EXIT_CODE = 124;

interface PreparedCommand {
  readonly running: RunningCommand;
  readonly session: SessionState | undefined;
  /** True when the command updates its session's cwd and env afterwards. */
  readonly carriesState: boolean;
  readonly timedOut: () => boolean;
  /** Kills the command on the server's own account (caller gone); its session stays as it was. */
  readonly abandon: () => void;
  readonly stopTimer: () => void;
  readonly stoppedByServer: () => boolean;
}

/** Resolves the session, cwd and env of an execute request; the session only carries state without per-call overrides. */
export function commandSettings(container: LocalContainer, body: ExecuteRequest): { session: SessionState | undefined; cwd: string; env: Record<string, string>; carriesState: boolean } {
  const session = body.sessionId === undefined || body.sessionId === SESSIONLESS_ID ? undefined : container.sessions.getOrCreate(body.sessionId);
  const cwd = containerPath(body.cwd ?? session?.cwd ?? "/workspace", session?.cwd ?? "/workspace");
  const env = { ...(session?.env ?? container.baseEnv), ...body.env };
  return { session, cwd, env, carriesState: session !== undefined && body.cwd === undefined && body.env === undefined };
}

function prepare(container: LocalContainer, body: ExecuteRequest, cwd: string, env: Record<string, string>, session: SessionState | undefined, carriesState: boolean): PreparedCommand {
  let running: RunningCommand | undefined;
  container.processes.launch(() => {
    running = startCommand(container, { command: body.command, cwd, env, ...(carriesState && session !== undefined ? { session } : {}) });
    return running.mapped;
  });
  const started = running as RunningCommand;
  let timedOut = false;
  let stoppedByServer = false;
  const stop = (): void => {
    stoppedByServer = true;
    started.mapped.kill("SIGKILL");
  };
  const timer = body.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    stop();
  }, body.timeoutMs);
  return {
    running: started,
    session,
    carriesState,
    timedOut: () => timedOut,
    abandon: stop,
    stopTimer: () => clearTimeout(timer),
    stoppedByServer: () => stoppedByServer,
  };
}

/**
 * Applies the state a session step left behind; false when the shell ended early and the session with it.
 * A command the server stopped never wrote its state, which must not read as the session shell exiting.
 */
async function settleSession(container: LocalContainer, prepared: PreparedCommand): Promise<boolean> {
  if (!prepared.carriesState || prepared.session === undefined) return true;
  const state = await prepared.running.readSessionState();
  if (state === undefined && prepared.stoppedByServer()) return true;
  if (state === undefined) {
    container.sessions.delete(prepared.session.id);
    return false;
  }
  prepared.session.cwd = state.cwd;
  prepared.session.env = state.env;
  return true;
}

function dropTrailingNewline(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/** `POST /api/execute`: runs a command and answers with its whole output. */
export async function handleExecute(context: RouteContext): Promise<void> {
  const { container, limits } = context;
  const body = await readJson(context.request, executeRequestSchema, limits.maxBodyBytes);
  const { session, cwd, env, carriesState } = commandSettings(container, body);
  const startedAt = Date.now();
  const sessionId = body.sessionId ?? SESSIONLESS_ID;
  if (!(await isDirectory(container, cwd))) {
    sendJson(context.response, 200, {
      success: false, exitCode: 1, stdout: "", stderr: `Failed to change directory to '${cwd}'`, command: body.command,
      duration: Date.now() - startedAt, timestamp: now(), sessionId,
    });
    return;
  }
  const prepared = prepare(container, body, cwd, env, session, carriesState);
  // A caller that gives up on the answer takes its command with it.
  context.response.once("close", () => {
    if (!context.response.writableEnded) prepared.abandon();
  });
  const stdout = createOutputBuffer(limits.maxOutputBytes);
  const stderr = createOutputBuffer(limits.maxOutputBytes);
  const { child } = prepared.running.mapped;
  child.stdout?.on("data", (chunk: Buffer) => stdout.append(chunk));
  child.stderr?.on("data", (chunk: Buffer) => stderr.append(chunk));
  const exit = await prepared.running.mapped.exited;
  prepared.stopTimer();
  stdout.finish();
  stderr.finish();
  const exitCode = prepared.timedOut() ? TIMEOUT_EXIT_CODE : exitCodeOf(exit);
  const sessionAlive = await settleSession(container, prepared);
  if (!sessionAlive && session !== undefined) {
    throw new ControlApiError("SESSION_TERMINATED", 410, `Session '${session.id}' terminated: the shell exited with code ${exitCode}`, { sessionId: session.id, exitCode }, {
      suggestion: "Avoid running `exit` at the top level of a session command; use a subshell `(exit N)` instead",
    });
  }
  let stderrText = stderr.text();
  if (prepared.timedOut()) stderrText += `Command timed out after ${body.timeoutMs}ms`;
  if (stdout.truncated || stderr.truncated) stderrText += `\n[local container: output truncated at ${limits.maxOutputBytes} bytes per stream]`;
  const inSession = session !== undefined;
  sendJson(context.response, 200, {
    success: exitCode === 0,
    exitCode,
    stdout: inSession ? dropTrailingNewline(stdout.text()) : stdout.text(),
    stderr: inSession ? dropTrailingNewline(stderrText) : stderrText,
    command: body.command,
    duration: Date.now() - startedAt,
    timestamp: now(),
    sessionId,
  });
}

/** `POST /api/execute/stream`: streams `start`, `stdout`/`stderr` and `complete` frames. */
export async function handleExecuteStream(context: RouteContext): Promise<void> {
  const { container, limits } = context;
  const body = await readJson(context.request, executeRequestSchema, limits.maxBodyBytes);
  const { session, cwd, env, carriesState } = commandSettings(container, body);
  if (!(await isDirectory(container, cwd))) {
    const where = session === undefined ? "sessionless execution" : `session '${session.id}'`;
    const reason = `ENOENT: no such file or directory, posix_spawn '/bin/bash' (cwd '${cwd}')`;
    throw new ControlApiError("STREAM_START_ERROR", 500, `Failed to execute streaming command '${body.command}' in ${where}: ${reason}`, {
      command: body.command,
      stderr: reason,
    });
  }
  const prepared = prepare(container, body, cwd, env, session, carriesState);
  const mapped = prepared.running.mapped;
  const record = container.processes.register(mapped, body.command);
  const sse = openSse(context.response);
  // A client that goes away takes its command with it.
  context.response.once("close", () => {
    if (record.status !== "running") return;
    record.status = "killed";
    prepared.abandon();
  });
  sse.write({ type: "start", command: body.command, timestamp: now() });
  const finished = new Promise<void>((resolve) => {
    record.listeners.add((event: ProcessEvent) => {
      if (event.type === "exit") {
        resolve();
        return;
      }
      if (event.data.length === 0) return;
      if (!sse.write({ type: event.type, data: event.data, timestamp: now() })) pauseUntil(mapped, sse.drained());
    });
  });
  await finished;
  prepared.stopTimer();
  const exitCode = prepared.timedOut() ? TIMEOUT_EXIT_CODE : (record.exitCode ?? 1);
  if (prepared.timedOut()) await sse.send({ type: "stderr", data: `Command timed out after ${body.timeoutMs}ms\n`, timestamp: now() });
  if (!(await settleSession(container, prepared)) && session !== undefined) {
    await sse.send({ type: "error", error: `Session '${session.id}' terminated: the shell exited with code ${exitCode}`, timestamp: now() });
  } else {
    await sse.send({ type: "complete", exitCode, timestamp: now() });
  }
  sse.end();
}

/** Holds the command's output pipes while the client catches up. */
function pauseUntil(mapped: MappedProcess, written: Promise<void>): void {
  const { stdout, stderr } = mapped.child;
  stdout?.pause();
  stderr?.pause();
  void written.then(() => {
    stdout?.resume();
    stderr?.resume();
  });
}
