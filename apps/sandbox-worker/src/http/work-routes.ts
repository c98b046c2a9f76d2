import { NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerBindings } from "../bindings.js";
import type { WorkerContext } from "../config.js";
import { requireBackupSettings } from "../runtime/backup-settings.js";
import { workRunnerName } from "../work/work-runner.js";
import { errorJSON } from "../work/work-outcome.js";
import { type WorkRecord, createWorkStore } from "../work/work-store.js";
import { json } from "./responses.js";
import { parseId, parseStartRequest } from "./work-request.js";

function workPath(record: Pick<WorkRecord, "sessionId" | "workId">): string {
  return `/v1/sessions/${record.sessionId}/work/${record.workId}`;
}

/**
 * `POST /v1/sessions/:sessionId/work`: records the item as queued and hands it to its runner. 202 with
 * the item and a `Location`; a work id that already exists returns that item unchanged, with 200.
 */
export async function startWork(
  request: Request,
  context: WorkerContext,
  rawSessionId: string,
): Promise<Response> {
  const sessionId = parseId(rawSessionId, "sessionId");
  const config = context.config();
  const { workId, profile } = await parseStartRequest(request, config.profiles);
  requireBackupSettings(config, profile);
  const { DB, WORK_RUNNER } = context.bindings;
  const store = createWorkStore(DB);
  const { created, record } = await store.create({ sessionId, workId });
  if (!created) return json(200, record, { location: workPath(record) });
  try {
    await WORK_RUNNER.get(WORK_RUNNER.idFromName(workRunnerName(sessionId, workId))).start({
      sessionId,
      workId,
      profile,
    });
  } catch (error) {
    // The item must not stay queued with nobody to run it.
    await store.finish(sessionId, workId, {
      type: "failed",
      error: errorJSON(error),
      cleanupErrors: [],
    });
    throw error;
  }
  return json(202, record, { location: workPath(record) });
}

/** `GET /v1/sessions/:sessionId/work/:workId`: the item, with its result once it has ended. */
export async function readWork(
  { DB }: WorkerBindings,
  rawSessionId: string,
  rawWorkId: string,
): Promise<Response> {
  const sessionId = parseId(rawSessionId, "sessionId");
  const workId = parseId(rawWorkId, "workId");
  const record = await createWorkStore(DB).get(sessionId, workId);
  if (record === null)
    throw new NotFoundError({
      message: `no work item ${workId} in session ${sessionId}`,
      context: { sessionId, workId },
    });
  return json(200, record);
}
