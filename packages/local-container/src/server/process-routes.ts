import { isDirectory, startCommand } from "./command-runner.js";
import { requestSession, spawnSettings } from "./exec-routes.js";
import type { ProcessEvent, ProcessRecord } from "./process-table.js";
import { readJson } from "./request-body.js";
import { processStartRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError } from "./control-api-error.js";
import { now, openSse, sendJson } from "./control-api-responses.js";

function processInfo(record: ProcessRecord): Record<string, unknown> {
  return {
    id: record.id,
    pid: record.pid,
    command: record.command,
    status: record.status,
    startTime: record.startTime.toISOString(),
    ...(record.endTime === undefined ? {} : { endTime: record.endTime.toISOString() }),
    ...(record.exitCode === undefined ? {} : { exitCode: record.exitCode }),
  };
}

function findProcess(context: RouteContext, id: string): ProcessRecord {
  const record = context.container.processes.get(id);
  if (record === undefined)
    throw new ControlApiError("PROCESS_NOT_FOUND", 404, `Process not found: ${id}`, {
      processId: id,
    });
  return record;
}

/** `POST /api/process/start`: a background command whose output is kept (bounded) for logs and streams. */
export async function handleProcessStart(context: RouteContext): Promise<void> {
  const { container } = context;
  const body = await readJson(
    context.request,
    processStartRequestSchema,
    context.limits.maxBodyBytes,
  );
  // A background process sees its session as it is now and never carries state back. It takes the
  // session's turn only to start, as on the published container.
  const session = requestSession(container, body.sessionId);
  const settings =
    session === undefined
      ? await spawnSettings(context, body)
      : await session.exclusive(() => spawnSettings(context, body));
  const { cwd } = settings;
  if (!(await isDirectory(container, cwd))) {
    throw new ControlApiError(
      "PROCESS_START_ERROR",
      500,
      `Failed to start process '${body.command}': working directory does not exist: ${cwd}`,
      { command: body.command, cwd },
    );
  }
  if (
    body.processId !== undefined &&
    container.processes.get(body.processId)?.status === "running"
  ) {
    throw new ControlApiError(
      "PROCESS_ALREADY_EXISTS",
      409,
      `Process '${body.processId}' is already running`,
      { processId: body.processId },
    );
  }
  const mapped = container.processes.launch(() => startCommand(container, settings));
  const record = container.processes.register(mapped, body.command, body.processId);
  if (session !== undefined) {
    // Deleting the session kills what it started.
    const kill = (): void => container.processes.kill(record);
    session.members.add(kill);
    void mapped.exited.then(() => session.members.delete(kill));
  }
  sendJson(context.response, 200, {
    success: true,
    processId: record.id,
    pid: record.pid,
    command: record.command,
    timestamp: now(),
  });
}

/** `GET /api/process/list`. */
export async function handleProcessList(context: RouteContext): Promise<void> {
  const status = context.url.searchParams.get("status");
  const records = context.container.processes
    .list()
    .filter((record) => status === null || record.status === status);
  sendJson(context.response, 200, {
    success: true,
    processes: records.map(processInfo),
    timestamp: now(),
  });
}

/** `GET /api/process/:id`. */
export async function handleProcessGet(context: RouteContext, id: string): Promise<void> {
  sendJson(context.response, 200, {
    success: true,
    process: processInfo(findProcess(context, id)),
    timestamp: now(),
  });
}

/** `DELETE /api/process/:id`: SIGTERM to the process group, SIGKILL after the grace period. */
export async function handleProcessKill(context: RouteContext, id: string): Promise<void> {
  context.container.processes.kill(findProcess(context, id));
  sendJson(context.response, 200, { success: true, processId: id, timestamp: now() });
}

/** `DELETE /api/process/kill-all`. */
export async function handleProcessKillAll(context: RouteContext): Promise<void> {
  const cleanedCount = context.container.processes.killAll();
  sendJson(context.response, 200, { success: true, cleanedCount, timestamp: now() });
}

/** `GET /api/process/:id/logs`. */
export async function handleProcessLogs(context: RouteContext, id: string): Promise<void> {
  const record = findProcess(context, id);
  sendJson(context.response, 200, {
    success: true,
    processId: id,
    stdout: record.stdout.text(),
    stderr: record.stderr.text(),
    timestamp: now(),
  });
}

/** `GET /api/process/:id/stream`: `process_info`, the backlog, live output, then `exit`. */
export async function handleProcessStream(context: RouteContext, id: string): Promise<void> {
  const record = findProcess(context, id);
  const sse = openSse(context.response);
  const frame = (type: string, data: string): Record<string, unknown> => ({
    type,
    data,
    processId: record.id,
    timestamp: now(),
  });
  const exitFrame = (): Record<string, unknown> => ({
    type: "exit",
    processId: record.id,
    exitCode: record.exitCode,
    data: `Process ${record.status} with exit code ${record.exitCode}`,
    timestamp: now(),
  });
  sse.write({
    type: "process_info",
    processId: record.id,
    command: record.command,
    status: record.status,
    timestamp: now(),
  });
  const stdout = record.stdout.text();
  const stderr = record.stderr.text();
  if (stdout.length > 0) sse.write(frame("stdout", stdout));
  if (stderr.length > 0) sse.write(frame("stderr", stderr));
  if (record.status !== "running" || record.exitCode !== undefined) {
    await sse.send(exitFrame());
    sse.end();
    return;
  }
  await new Promise<void>((resolve) => {
    const listener = (event: ProcessEvent): void => {
      if (event.type === "exit") {
        resolve();
      } else if (event.data.length > 0) {
        sse.write(frame(event.type, event.data));
      }
    };
    record.listeners.add(listener);
    // Unlike the published server, a reader that goes away releases its listener at once.
    context.response.once("close", () => {
      record.listeners.delete(listener);
      resolve();
    });
  });
  if (!sse.closed) await sse.send(exitFrame());
  sse.end();
}
