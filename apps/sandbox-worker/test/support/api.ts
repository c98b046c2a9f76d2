import { SELF, env } from "cloudflare:test";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import { expect } from "vitest";
import * as z from "zod";
import type { WorkRecord } from "../../src/work/work-store.js";

/** The token vitest.config.ts binds as `API_TOKEN`. */
export const TOKEN = "test-token-0123456789abcdef";
export const ORIGIN = "https://sandbox-worker.test";
export const testEnv = env;

/** A request to the Worker through its real fetch entrypoint, authenticated unless headers say otherwise. */
export function call(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TOKEN}`);
  return SELF.fetch(`${ORIGIN}${path}`, { ...init, headers });
}

/** POSTs a work item and returns the response and its JSON. */
export async function startWork(
  sessionId: string,
  body: { workId?: string; profile: string | ManagedRuntimeProfile },
): Promise<{ response: Response; record: WorkRecord }> {
  const response = await call(`/v1/sessions/${sessionId}/work`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { response, record: (await response.json()) as WorkRecord };
}

/** Reads a work item. */
export async function readWork(sessionId: string, workId: string): Promise<WorkRecord> {
  const response = await call(`/v1/sessions/${sessionId}/work/${workId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as WorkRecord;
}

const ENDED = new Set(["completed", "failed", "lease_lost", "conflict"]);

/** Polls the API until the item has ended. */
export async function waitForEnd(
  sessionId: string,
  workId: string,
  timeout = 45_000,
): Promise<WorkRecord> {
  let record: WorkRecord | undefined;
  await expect
    .poll(
      async () => {
        record = await readWork(sessionId, workId);
        return ENDED.has(record.status);
      },
      { timeout, interval: 100 },
    )
    .toBe(true);
  return record as WorkRecord;
}

/** A profile whose harness is one `sh -c` script, with a durable workspace and outputs. */
export function shellProfile(script: string): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "durable" },
    runtimeCheckpoint: "disabled",
    driver: { type: "ama_worker", process: { command: "sh", args: ["-c", script] } },
  };
}

/** A fresh session id. */
export function newSessionId(): string {
  return `s-${crypto.randomUUID()}`;
}

const OUTPUT_PREFIX = "managed-runtime-outputs";
const manifestSchema = z.object({
  sessionId: z.string(),
  workId: z.string(),
  entries: z.array(z.object({ logicalPath: z.string(), contentHash: z.string() })),
});

/**
 * The text of an output a work item collected, read the way a consumer would: the item's manifest in
 * `OUTPUTS_BUCKET`, then the content-addressed blob it names. Null when the item has no such output.
 */
export async function outputText(
  sessionId: string,
  workId: string,
  logicalPath: string,
): Promise<string | null> {
  const listing = await testEnv.OUTPUTS_BUCKET.list({
    prefix: `${OUTPUT_PREFIX}/manifests/`,
    limit: 1000,
  });
  for (const object of listing.objects) {
    const manifest = manifestSchema.parse(
      await (await testEnv.OUTPUTS_BUCKET.get(object.key))?.json(),
    );
    if (manifest.sessionId !== sessionId || manifest.workId !== workId) continue;
    const entry = manifest.entries.find((candidate) => candidate.logicalPath === logicalPath);
    if (entry === undefined) return null;
    const blob = await testEnv.OUTPUTS_BUCKET.get(
      `${OUTPUT_PREFIX}/blobs/${entry.contentHash.replace(/^sha256:/, "")}`,
    );
    return blob === null ? null : blob.text();
  }
  return null;
}
