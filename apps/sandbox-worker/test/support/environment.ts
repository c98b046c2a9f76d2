import {
  SELF,
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { expect } from "vitest";
import type { ClaimedWorkRecord } from "../../src/environment/claimed-store.js";
import worker from "../../src/index.js";
import { ORIGIN, call, testEnv } from "./api.js";
import type { RecordedWebhook } from "./environment-types.js";

/** The self-hosted environment the global setup started on the local control plane. */
export const environment = testEnv.TEST_ENVIRONMENT;

/** A tool call of a scripted agent turn (`agent_toolset_20260401`). */
export interface ToolCall {
  readonly name: "bash" | "read" | "write" | "edit" | "glob" | "grep";
  readonly input: Record<string, unknown>;
}

/** A call to the control plane's admin API, over loopback from workerd. */
export async function admin<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${environment.planeUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${environment.adminToken}`,
      "content-type": "application/json",
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new Error(`admin ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** A fresh session of the environment. */
export async function newSession(): Promise<string> {
  return (
    await admin<{ id: string }>("/admin/v1/sessions", { environment_id: environment.environmentId })
  ).id;
}

/** Queues a scripted user turn; it queues one work item (and one signed webhook) once it starts. */
export async function queueTurn(
  sessionId: string,
  toolCalls: readonly ToolCall[],
): Promise<string> {
  return (
    await admin<{ id: string }>(`/admin/v1/sessions/${sessionId}/turns`, {
      tool_calls: toolCalls,
      final_message: "done",
    })
  ).id;
}

interface PlaneWork {
  readonly id: string;
  readonly state: string;
  readonly data: { readonly type: string; readonly id: string };
}

/** The session's work items at the control plane, oldest first. */
export async function sessionWork(sessionId: string): Promise<PlaneWork[]> {
  const { data } = await admin<{ data: PlaneWork[] }>(
    `/admin/v1/work?environment_id=${environment.environmentId}`,
  );
  return data.filter((work) => work.data.id === sessionId);
}

/** Waits until the session has `count` work items at the control plane and returns them. */
export async function waitForSessionWork(sessionId: string, count: number): Promise<PlaneWork[]> {
  let items: PlaneWork[] = [];
  await expect
    .poll(async () => (items = await sessionWork(sessionId)).length, {
      timeout: 30_000,
      interval: 100,
    })
    .toBeGreaterThanOrEqual(count);
  return items;
}

/** The signed `session.pending` webhooks the control plane sent for the session, in order. */
export async function webhooksFor(sessionId: string, count: number): Promise<RecordedWebhook[]> {
  let found: RecordedWebhook[] = [];
  await expect
    .poll(
      async () => {
        const all = (await (
          await fetch(`${environment.relayUrl}/deliveries`)
        ).json()) as RecordedWebhook[];
        found = all.filter(
          (hook) => (JSON.parse(hook.body) as { data?: { id?: string } }).data?.id === sessionId,
        );
        return found.length;
      },
      { timeout: 30_000, interval: 100 },
    )
    .toBeGreaterThanOrEqual(count);
  return found;
}

/** Hands a webhook to the Worker's webhook route, as the platform POSTs it. */
export function deliver(hook: RecordedWebhook): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/v1/environment/webhook`, {
    method: "POST",
    headers: hook.headers,
    body: hook.body,
  });
}

/** The claimed item as the operator API reports it, or null before it was claimed. */
export async function claimedWork(workId: string): Promise<ClaimedWorkRecord | null> {
  const response = await call(`/v1/environment/work/${workId}`);
  if (response.status === 404) return null;
  expect(response.status).toBe(200);
  return (await response.json()) as ClaimedWorkRecord;
}

/** Polls the operator API until the claimed item has ended. */
export async function waitForClaimedEnd(
  workId: string,
  timeout = 60_000,
): Promise<ClaimedWorkRecord> {
  let record: ClaimedWorkRecord | null = null;
  await expect
    .poll(async () => (record = await claimedWork(workId))?.status ?? "unclaimed", {
      timeout,
      interval: 200,
    })
    .not.toMatch(/^(unclaimed|running)$/);
  return record as unknown as ClaimedWorkRecord;
}

interface TranscriptEntry {
  readonly name: string;
  readonly work_id: string;
  readonly result: { readonly content: unknown; readonly is_error: boolean } | null;
}

/** The session's tool calls and their results, as the control plane recorded them. */
export async function transcript(sessionId: string): Promise<TranscriptEntry[]> {
  return (await admin<{ entries: TranscriptEntry[] }>(`/admin/v1/sessions/${sessionId}/transcript`))
    .entries;
}

/** The text of a tool result's content. */
export function resultText(entry: TranscriptEntry): string {
  const content = entry.result?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? content.map((block: { text?: string }) => block.text ?? "").join("")
    : "";
}

/** Runs the Worker's cron trigger once and waits for everything it scheduled. */
export async function runCron(env: typeof testEnv = testEnv): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** Rows of every claimed item in D1. */
export async function claimedRowCount(): Promise<number> {
  const row = await testEnv.DB.prepare("SELECT COUNT(*) AS n FROM environment_work").first<{
    n: number;
  }>();
  return row?.n ?? 0;
}

/** Ids of the containers alive on the local container server (each a `Sandbox` Durable Object id). */
export async function liveContainers(): Promise<string[]> {
  const response = await fetch(`${testEnv.OMA_TEST_CONTAINER_URL}/__oma/containers/`, {
    headers: { "X-Oma-Control-Token": `Bearer ${testEnv.OMA_TEST_CONTAINER_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { containers: string[] }).containers;
}

/**
 * Waits (up to `timeout`) until no container of a claimed item's runtime is alive on the local container
 * server, and fails naming the ones still alive. Only this file's items are looked at, so files running
 * alongside do not interfere.
 */
export async function expectNoItemContainers(timeout = 30_000): Promise<void> {
  const { results } = await testEnv.DB.prepare(
    "SELECT runtime_id FROM environment_work WHERE runtime_id IS NOT NULL",
  ).all<{ runtime_id: string }>();
  const ours = new Map(results.map((row) => [containerIdOf(row.runtime_id), row.runtime_id]));
  const alive = async () =>
    (await liveContainers())
      .filter((id) => ours.has(id))
      .map((id) => `${ours.get(id)} (container ${id})`);
  await expect
    .poll(alive, { timeout, interval: 250, message: "containers of ended items still alive" })
    .toEqual([]);
}

/** The container id (its `Sandbox` Durable Object id) of a runtime id. */
export function containerIdOf(runtimeId: string): string {
  return testEnv.Sandbox.idFromName(runtimeId).toString();
}

/** Claimed items running now: each is an `EnvironmentRunner` running its item (the Worker's D1 table). */
export async function runningClaims(): Promise<number> {
  const row = await testEnv.DB.prepare(
    "SELECT COUNT(*) AS n FROM environment_work WHERE status = 'running'",
  ).first<{ n: number }>();
  return row?.n ?? 0;
}

/** `count` fresh sessions, each with one queued turn running `bash` once, and their signed webhooks. */
export async function queueSessions(
  count: number,
): Promise<{ sessionIds: string[]; hooks: RecordedWebhook[] }> {
  const sessionIds: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      { name: "bash", input: { command: `echo item-${index} > item.txt && cat item.txt` } },
    ]);
    sessionIds.push(sessionId);
  }
  const wanted = new Set(sessionIds);
  let hooks: RecordedWebhook[] = [];
  await expect
    .poll(
      async () => {
        const all = (await (
          await fetch(`${environment.relayUrl}/deliveries`)
        ).json()) as RecordedWebhook[];
        hooks = all.filter((hook) =>
          wanted.has((JSON.parse(hook.body) as { data?: { id?: string } }).data?.id ?? ""),
        );
        return hooks.length;
      },
      { timeout: 120_000, interval: 200 },
    )
    .toBeGreaterThanOrEqual(count);
  return { sessionIds, hooks };
}
