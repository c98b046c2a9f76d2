import { createD1SqlClient } from "@open-managed-agents/managed-runtime-host";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import {
  type ClaimedOutcome,
  type ClaimedStatus,
  claimedOutcomeSchema,
} from "./claimed-outcome.js";

/** A claimed work item as the operator API returns it. */
export interface ClaimedWorkRecord {
  readonly workId: string;
  /** Null for a non-session (health check) item. */
  readonly sessionId: string | null;
  readonly status: ClaimedStatus;
  /** Times this work id was claimed (a reclaim after a lapsed lease counts again). */
  readonly claims: number;
  /** The latest sandbox runtime the item opened (its `Sandbox` Durable Object name). */
  readonly runtimeId: string | null;
  readonly result: ClaimedOutcome | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const rowSchema = z.object({
  work_id: z.string(),
  session_id: z.string().nullable(),
  status: z.enum([
    "running",
    "completed",
    "failed",
    "lease_lost",
    "conflict",
    "skipped",
    "rejected",
    "deferred",
    "interrupted",
  ]),
  claims: z.number(),
  runtime_id: z.string().nullable(),
  result: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
});

const COLUMNS = "work_id, session_id, status, claims, runtime_id, result, created_at, updated_at";
// A claim of a running item changes nothing (a duplicate trigger); a reclaim of an ended one starts it again.
const CLAIM = `INSERT INTO environment_work (${COLUMNS}) VALUES (?, ?, 'running', 1, NULL, NULL, ?, ?)
  ON CONFLICT (work_id) DO UPDATE SET status = 'running', claims = claims + 1, result = NULL, updated_at = excluded.updated_at
  WHERE environment_work.status <> 'running' RETURNING ${COLUMNS}`;
const SELECT = `SELECT ${COLUMNS} FROM environment_work WHERE work_id = ?`;
const LIST = `SELECT ${COLUMNS} FROM environment_work ORDER BY updated_at DESC LIMIT ?`;
const RUNNING = "SELECT COUNT(*) AS running FROM environment_work WHERE status = 'running'";
const RUNTIME = "UPDATE environment_work SET runtime_id = ?, updated_at = ? WHERE work_id = ?";
const FINISH =
  "UPDATE environment_work SET status = ?, result = ?, updated_at = ? WHERE work_id = ? AND status = 'running'";

function recordOf(input: unknown): ClaimedWorkRecord {
  const row = parseRecord(rowSchema, input, { record: "claimed work row", code: "internal" });
  return {
    workId: row.work_id,
    sessionId: row.session_id,
    status: row.status,
    claims: row.claims,
    runtimeId: row.runtime_id,
    result:
      row.result === null
        ? null
        : (parseRecord(claimedOutcomeSchema, JSON.parse(row.result), {
            record: "stored claimed work result",
            code: "internal",
          }) as ClaimedOutcome),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The claimed work table on D1 (migrations/0004_environment_work.sql). */
export interface ClaimedWorkStore {
  /** Marks a claim as running; false when the item is running already (the claim is a duplicate). */
  begin(workId: string, sessionId: string | null): Promise<boolean>;
  get(workId: string): Promise<ClaimedWorkRecord | null>;
  /** The most recently updated items, newest first. */
  list(limit: number): Promise<readonly ClaimedWorkRecord[]>;
  /** Items running now, across every Durable Object. */
  running(): Promise<number>;
  recordRuntime(workId: string, runtimeId: string): Promise<void>;
  finish(workId: string, outcome: ClaimedOutcome): Promise<void>;
}

/** Creates the claimed work store over the Worker's D1 database. */
export function createClaimedWorkStore(database: D1Database): ClaimedWorkStore {
  const client = createD1SqlClient(database);
  return {
    async begin(workId, sessionId) {
      const now = Date.now();
      return (await client.all(CLAIM, [workId, sessionId, now, now])).length > 0;
    },
    async get(workId) {
      const [row] = await client.all(SELECT, [workId]);
      return row === undefined ? null : recordOf(row);
    },
    async list(limit) {
      return (await client.all(LIST, [limit])).map(recordOf);
    },
    async running() {
      const [row] = await client.all(RUNNING, []);
      return Number((row as { running?: unknown } | undefined)?.running ?? 0);
    },
    async recordRuntime(workId, runtimeId) {
      await client.run(RUNTIME, [runtimeId, Date.now(), workId]);
    },
    async finish(workId, outcome) {
      await client.run(FINISH, [outcome.type, JSON.stringify(outcome), Date.now(), workId]);
    },
  };
}
