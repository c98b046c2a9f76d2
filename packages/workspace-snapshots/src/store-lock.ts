import { randomUUID } from "node:crypto";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { UnavailableError, jitteredBackoffMs } from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";
import * as z from "zod";

/** How a session's lock is taken. */
export interface LockOptions {
  /** A lock older than this is taken to belong to a process that died, and is broken. */
  readonly ttlMs: number;
  /** How long to wait for a held lock before failing `unavailable`. */
  readonly waitMs: number;
  readonly now: () => Date;
}

const lockSchema = z.object({ owner: z.string(), expires: z.number() });

async function readLock(store: BlobStore, key: string) {
  const held = await store.get(key);
  if (!held) return null;
  let body: unknown = null;
  try {
    body = JSON.parse(await held.text());
  } catch {
    body = null;
  }
  const parsed = lockSchema.safeParse(body);
  return { uploaded: held.uploaded, lock: parsed.success ? parsed.data : null };
}

/**
 * Runs `work` holding the lock object `key`: a checkpoint and a sweep of one session exclude each other in
 * every process and on every machine that shares the store, because the lock is an object written with
 * `ifNoneMatch`, never process memory.
 */
export async function withStoreLock<T>(store: BlobStore, key: string, options: LockOptions, work: () => Promise<T>): Promise<T> {
  const owner = randomUUID();
  const started = options.now().getTime();
  for (let attempt = 0; ; attempt += 1) {
    const body = JSON.stringify({ owner, expires: options.now().getTime() + options.ttlMs });
    const taken = await store.put(key, body, { contentType: "application/json", ifNoneMatch: "*" });
    if (taken !== null) break;
    const held = await readLock(store, key);
    // A lock whose body cannot be read expires by its upload time.
    const expires = held?.lock ? held.lock.expires : (held?.uploaded.getTime() ?? 0) + options.ttlMs;
    if (held && expires < options.now().getTime()) {
      await store.delete(key);
      continue;
    }
    if (options.now().getTime() - started > options.waitMs) {
      throw new UnavailableError({ message: "the session's snapshots are locked by another checkpoint or sweep", context: { key } });
    }
    await abortableSleep(jitteredBackoffMs({ attempt, baseMs: 50, maxMs: 2000, jitter: 0.5 }));
  }
  try {
    return await work();
  } finally {
    const held = await readLock(store, key);
    if (held?.lock?.owner === owner) await store.delete(key);
  }
}
