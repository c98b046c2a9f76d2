import { randomUUID } from "node:crypto";
import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  UnavailableError,
  jitteredBackoffMs,
} from "@open-managed-agents/runtime-resource-contract";
import { abortableSleep } from "@open-managed-agents/runtime-utils";
import * as z from "zod";

/** How a session's lock is taken. */
export interface LockOptions {
  /**
   * A lock not renewed for this long belongs to a process that died, and is broken. The holder renews it every
   * third of this while its work runs.
   */
  readonly ttlMs: number;
  /** How long to wait for a held lock before failing `unavailable`. */
  readonly waitMs: number;
  readonly now: () => Date;
}

const lockSchema = z.object({ owner: z.string(), expires: z.number() });

async function readLock(store: BlobStore, key: string) {
  const held = await store.get(key);
  if (!held) return null;
  const body: unknown = await held
    .text()
    .then(JSON.parse)
    .catch(() => null);
  const parsed = lockSchema.safeParse(body);
  return { uploaded: held.uploaded, lock: parsed.success ? parsed.data : null };
}

/**
 * Runs `work` holding the lock object `key`: a checkpoint and a sweep of one session exclude each other in
 * every process and on every machine that shares the store, because the lock is an object written with
 * `ifNoneMatch`, never process memory.
 */
export async function withStoreLock<T>(
  store: BlobStore,
  key: string,
  options: LockOptions,
  work: () => Promise<T>,
): Promise<T> {
  const owner = randomUUID();
  const now = () => options.now().getTime();
  // The lock as this owner holds it, expiring a ttl from now; with `ifNoneMatch`, only where none is.
  const write = (ifNoneMatch?: "*") => {
    const body = JSON.stringify({ owner, expires: now() + options.ttlMs });
    return store.put(key, body, { contentType: "application/json", ifNoneMatch });
  };
  const started = now();
  for (let attempt = 0; ; attempt += 1) {
    if ((await write("*")) !== null) break;
    const held = await readLock(store, key);
    // A lock whose body cannot be read expires by its upload time.
    const expires = held?.lock?.expires ?? (held?.uploaded.getTime() ?? 0) + options.ttlMs;
    if (held && expires < now()) {
      await store.delete(key);
      continue;
    }
    if (now() - started > options.waitMs) {
      throw new UnavailableError({
        message: "the session's snapshots are locked by another checkpoint or sweep",
        context: { key },
      });
    }
    await abortableSleep(jitteredBackoffMs({ attempt, baseMs: 50, maxMs: 2000, jitter: 0.5 }));
  }
  // Renewed while held, so a live holder's lock never expires and a dead one's does soon.
  let renewing: Promise<unknown> = Promise.resolve();
  const renewEveryMs = Math.max(1, Math.floor(options.ttlMs / 3));
  const timer = setInterval(() => {
    renewing = readLock(store, key)
      .then((held) => (held?.lock?.owner === owner ? write() : null))
      .catch(() => undefined);
  }, renewEveryMs);
  timer.unref?.();
  try {
    return await work();
  } finally {
    clearInterval(timer);
    await renewing;
    const held = await readLock(store, key);
    if (held?.lock?.owner === owner) await store.delete(key);
  }
}
