import { createD1SqlClient } from "@open-managed-agents/managed-runtime-host";
import { InternalError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { WorkItem } from "./work-item.js";
import { type WorkOutcome, workOutcomeSchema } from "./work-outcome.js";

/** Where a work item is: waiting for its runner, running, or ended as its outcome's type says. */
export type WorkStatus = "queued" | "running" | WorkOutcome["type"];

/** A work item as the API returns it. */
export interface WorkRecord {
  readonly sessionId: string;
  readonly workId: string;
  readonly status: WorkStatus;
  /** The latest sandbox runtime the item opened (its `Sandbox` Durable Object name). */
  readonly runtimeId: string | null;
  readonly result: WorkOutcome | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const rowSchema = z.object({
  session_id: z.string(),
  work_id: z.string(),
  status: z.enum(["queued", "running", "completed", "failed", "lease_lost", "conflict"]),
  runtime_id: z.string().nullable(),
  result: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
});

const COLUMNS = "session_id, work_id, status, runtime_id, result, created_at, updated_at";
const INSERT = `INSERT INTO work_items (${COLUMNS}) VALUES (?, ?, 'queued', NULL, NULL, ?, ?)
  ON CONFLICT (session_id, work_id) DO NOTHING RETURNING ${COLUMNS}`;
const SELECT = `SELECT ${COLUMNS} FROM work_items WHERE session_id = ? AND work_id = ?`;
// An ended item never goes back to running (a retried runner finds it ended and stops).
const START = `UPDATE work_items SET status = 'running', updated_at = ? WHERE session_id = ? AND work_id = ? AND status IN ('queued', 'running')`;
const RUNTIME =
  "UPDATE work_items SET runtime_id = ?, updated_at = ? WHERE session_id = ? AND work_id = ?";
const FINISH =
  "UPDATE work_items SET status = ?, result = ?, updated_at = ? WHERE session_id = ? AND work_id = ?";

function recordOf(input: unknown): WorkRecord {
  const row = parseRecord(rowSchema, input, { record: "work item row", code: "internal" });
  return {
    sessionId: row.session_id,
    workId: row.work_id,
    status: row.status,
    runtimeId: row.runtime_id,
    result:
      row.result === null
        ? null
        : (parseRecord(workOutcomeSchema, JSON.parse(row.result), {
            record: "stored work result",
            code: "internal",
          }) as WorkOutcome),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The work items table on D1 (migrations/0002_work_items.sql). */
export interface WorkStore {
  /** Records a new item as `queued`; an item with the same ids is returned as it is, with `created: false`. */
  create(
    item: Pick<WorkItem, "sessionId" | "workId">,
  ): Promise<{ readonly created: boolean; readonly record: WorkRecord }>;
  get(sessionId: string, workId: string): Promise<WorkRecord | null>;
  /** Moves a queued (or interrupted running) item to `running`; false when it has already ended. */
  start(sessionId: string, workId: string): Promise<boolean>;
  recordRuntime(sessionId: string, workId: string, runtimeId: string): Promise<void>;
  finish(sessionId: string, workId: string, outcome: WorkOutcome): Promise<void>;
}

/** Creates the work store over the Worker's D1 database. */
export function createWorkStore(database: D1Database): WorkStore {
  const client = createD1SqlClient(database);
  const get = async (sessionId: string, workId: string): Promise<WorkRecord | null> => {
    const [row] = await client.all(SELECT, [sessionId, workId]);
    return row === undefined ? null : recordOf(row);
  };
  return {
    async create(item) {
      const now = Date.now();
      const [row] = await client.all(INSERT, [item.sessionId, item.workId, now, now]);
      if (row !== undefined) return { created: true, record: recordOf(row) };
      const existing = await get(item.sessionId, item.workId);
      if (existing === null)
        throw new InternalError({
          message: "work item vanished between insert and read",
          context: { sessionId: item.sessionId, workId: item.workId },
        });
      return { created: false, record: existing };
    },
    get,
    async start(sessionId, workId) {
      return (await client.run(START, [Date.now(), sessionId, workId])).changes > 0;
    },
    async recordRuntime(sessionId, workId, runtimeId) {
      await client.run(RUNTIME, [runtimeId, Date.now(), sessionId, workId]);
    },
    async finish(sessionId, workId, outcome) {
      await client.run(FINISH, [
        outcome.type,
        JSON.stringify(outcome),
        Date.now(),
        sessionId,
        workId,
      ]);
    },
  };
}
