import type { MappedProcess } from "@open-managed-agents/local-confinement";
import { containerPath, exitCodeOf, isDirectory, startCommand } from "./command-runner.js";
import type { LocalContainer } from "./container-registry.js";
import { createOutputBuffer } from "./output-buffer.js";
import type { ProcessEvent } from "./process-table.js";
import { readJson } from "./request-body.js";
import { type ExecuteRequest, SESSIONLESS_ID, executeRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { exportLines, runInSession, snapshotSession } from "./session-commands.js";
import type { SessionState } from "./sessions.js";
import { ControlApiError } from "./control-api-error.js";
import { now, openSse, sendJson } from "./control-api-responses.js";

/** Exit code of a sessionless command stopped by its `timeoutMs` (streamed or not), as Cloudflare's container reports it. */
const TIMEOUT_EXIT_CODE = 124;

/** A command ready to spawn outside the session shell: its cwd, env and the snapshot it sources. */
export interface SpawnSettings {
  readonly session: SessionState | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly snapshot: string | undefined;
  /** The command as spawned: per-call exports, then the request's command. */
  readonly command: string;
}

/** Resolves the session of a request; `__DISABLE_SESSION__` or none runs outside any session. */
export function requestSession(
  container: LocalContainer,
  sessionId: string | undefined,
): SessionState | undefined {
  return sessionId === undefined || sessionId === SESSIONLESS_ID
    ? undefined
    : container.sessions.getOrCreate(sessionId);
}

/**
 * Settings of a command that runs beside its session's shell (streamed or background): it sees the
 * session's variables, functions, aliases and cwd as they are now; its own changes stay its own.
 */
export async function spawnSettings(
  context: RouteContext,
  body: ExecuteRequest,
): Promise<SpawnSettings> {
  const { container, limits } = context;
  const session = requestSession(container, body.sessionId);
  if (session === undefined) {
    const cwd = containerPath(body.cwd ?? "/workspace");
    return {
      session,
      cwd,
      env: { ...container.baseEnv, ...body.env },
      snapshot: undefined,
      command: body.command,
    };
  }
  const taken = await snapshotSession(container, session, limits.maxOutputBytes);
  const cwd = containerPath(body.cwd ?? taken.cwd, taken.cwd);
  return {
    session,
    cwd,
    env: { ...session.env, ...body.env },
    snapshot: taken.snapshot,
    command: `${exportLines(body.env)}${body.command}`,
  };
}

function dropTrailingNewline(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/** Runs a sessionless command to its end; a timeout kills it (there is no session for it to live on in) and answers exit code 124. */
async function runSessionless(
  context: RouteContext,
  body: ExecuteRequest,
  cwd: string,
): Promise<{ exitCode: number; stdout: string; stderr: string; truncated: boolean }> {
  const { container, limits } = context;
  const mapped = container.processes.launch(() =>
    startCommand(container, {
      command: body.command,
      cwd,
      env: { ...container.baseEnv, ...body.env },
    }),
  );
  // A caller that gives up on the answer takes its command with it.
  context.response.once("close", () => {
    if (!context.response.writableEnded) mapped.kill("SIGKILL");
  });
  const stdout = createOutputBuffer(limits.maxOutputBytes);
  const stderr = createOutputBuffer(limits.maxOutputBytes);
  mapped.child.stdout?.on("data", (chunk: Buffer) => stdout.append(chunk));
  mapped.child.stderr?.on("data", (chunk: Buffer) => stderr.append(chunk));
  let timedOut = false;
  const timer =
    body.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          mapped.kill("SIGKILL");
        }, body.timeoutMs);
  const exit = await mapped.exited;
  clearTimeout(timer);
  stdout.finish();
  stderr.finish();
  // As Cloudflare's container answers it: a normal result with timeout(1)'s exit code, not an error.
  const exitCode = timedOut ? TIMEOUT_EXIT_CODE : exitCodeOf(exit);
  return {
    exitCode,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: stdout.truncated || stderr.truncated,
  };
}

/** `POST /api/execute`: runs a command (in its session's shell when it has one) and answers with its whole output. */
export async function handleExecute(context: RouteContext): Promise<void> {
  const { container, limits } = context;
  const body = await readJson(context.request, executeRequestSchema, limits.maxBodyBytes);
  const session = requestSession(container, body.sessionId);
  const startedAt = Date.now();
  const sessionId = body.sessionId ?? SESSIONLESS_ID;
  const cwd =
    body.cwd === undefined ? undefined : containerPath(body.cwd, session?.cwd ?? "/workspace");
  if (cwd !== undefined && !(await isDirectory(container, cwd))) {
    sendJson(context.response, 200, {
      success: false,
      exitCode: 1,
      stdout: "",
      stderr: `Failed to change directory to '${cwd}'`,
      command: body.command,
      duration: Date.now() - startedAt,
      timestamp: now(),
      sessionId,
    });
    return;
  }
  const result =
    session === undefined
      ? await runSessionless(context, body, cwd ?? "/workspace")
      : await runInSession(
          container,
          session,
          body.command,
          { cwd, env: body.env, timeoutMs: body.timeoutMs },
          limits.maxOutputBytes,
        );
  let stderrText = result.stderr;
  if (result.truncated)
    stderrText += `\n[local container: output truncated at ${limits.maxOutputBytes} bytes per stream]`;
  const inSession = session !== undefined;
  sendJson(context.response, 200, {
    success: result.exitCode === 0,
    exitCode: result.exitCode,
    stdout: inSession ? dropTrailingNewline(result.stdout) : result.stdout,
    stderr: inSession ? dropTrailingNewline(stderrText) : stderrText,
    command: body.command,
    duration: Date.now() - startedAt,
    timestamp: now(),
    sessionId,
  });
}

/** `POST /api/execute/stream`: streams `start`, `stdout`/`stderr` and `complete` frames; a session's turn is held until the end. */
export async function handleExecuteStream(context: RouteContext): Promise<void> {
  const { container, limits } = context;
  const body = await readJson(context.request, executeRequestSchema, limits.maxBodyBytes);
  const session = requestSession(container, body.sessionId);
  if (session === undefined) return streamCommand(context, body);
  return session.exclusive(() => streamCommand(context, body));
}

async function streamCommand(context: RouteContext, body: ExecuteRequest): Promise<void> {
  const { container } = context;
  const settings = await spawnSettings(context, body);
  const { session, cwd } = settings;
  if (!(await isDirectory(container, cwd))) {
    const where = session === undefined ? "sessionless execution" : `session '${session.id}'`;
    const reason = `ENOENT: no such file or directory, posix_spawn '/bin/bash' (cwd '${cwd}')`;
    throw new ControlApiError(
      "STREAM_START_ERROR",
      500,
      `Failed to execute streaming command '${body.command}' in ${where}: ${reason}`,
      {
        command: body.command,
        stderr: reason,
      },
    );
  }
  const mapped = container.processes.launch(() => startCommand(container, settings));
  const record = container.processes.register(mapped, body.command);
  const sse = openSse(context.response);
  // A client that goes away takes its command with it.
  context.response.once("close", () => {
    if (record.status === "running") container.processes.kill(record, "SIGKILL");
  });
  let timedOut = false;
  const timer =
    body.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          mapped.kill("SIGKILL");
        }, body.timeoutMs);
  sse.write({ type: "start", command: body.command, timestamp: now() });
  await new Promise<void>((resolve) => {
    record.listeners.add((event: ProcessEvent) => {
      if (event.type === "exit") {
        resolve();
        return;
      }
      if (event.data.length === 0) return;
      if (!sse.write({ type: event.type, data: event.data, timestamp: now() }))
        pauseUntil(mapped, sse.drained());
    });
  });
  clearTimeout(timer);
  const exitCode = timedOut ? TIMEOUT_EXIT_CODE : (record.exitCode ?? 1);
  if (timedOut)
    await sse.send({
      type: "stderr",
      data: `Command timed out after ${body.timeoutMs}ms\n`,
      timestamp: now(),
    });
  await sse.send({ type: "complete", exitCode, timestamp: now() });
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
