import type { ManifestItem } from "./manifest-lines.js";
import { cursor } from "./sandbox-delta.js";
import type { PathRecords, RecordGroup } from "./sandbox-records.js";
import { pathKey } from "./split-records.js";

/** One path a delta looks at: what the sandbox's records lost and gained there, and the previous delta's line. */
export interface TouchedPath {
  /** The path's UTF-8 bytes (its records' key without the `//`). */
  readonly bytes: Buffer;
  readonly path: string;
  /** What the previous pass's records said of it and no longer do; null when they said nothing of it that changed. */
  readonly minus: PathRecords | null;
  /** What this pass's records say of it that the previous pass's did not; null likewise. */
  readonly plus: PathRecords | null;
  /** The previous delta's line at the path, if it has one. */
  readonly prior: ManifestItem | undefined;
}

/**
 * The paths the sandbox's `removed` and `added` records and the previous delta's lines (`prior`) name, merged
 * in manifest order and handed out one at a time, so a delta over a large base holds none of them longer
 * than it takes to place it: a map of every touched path made the young generation of a busy driver grow
 * to its maximum. Keys must strictly increase in each source (`DeltaInconsistent` otherwise).
 */
export async function* touchedPaths(removed: AsyncIterable<RecordGroup>, added: AsyncIterable<RecordGroup>, prior: AsyncIterable<ManifestItem>): AsyncGenerator<TouchedPath> {
  const gone = cursor(removed, (group) => group.key);
  const fresh = cursor(added, (group) => group.key);
  const before = cursor(prior, (item) => pathKey(item.path));
  try {
    await Promise.all([gone.advance(), fresh.advance(), before.advance()]);
    for (;;) {
      let key: Buffer | null = null;
      for (const candidate of [gone.key, fresh.key, before.key]) if (candidate && (!key || Buffer.compare(candidate, key) < 0)) key = candidate;
      if (!key) return;
      const minus = gone.take(key);
      const plus = fresh.take(key);
      const item = before.take(key);
      const path = plus?.entry?.path ?? minus?.entry?.path ?? item?.path ?? key.toString("utf8", 0, key.byteLength - 2);
      const touched: TouchedPath = { bytes: key.subarray(0, key.byteLength - 2), path, minus, plus, prior: item ?? undefined };
      await Promise.all([minus && gone.advance(), plus && fresh.advance(), item && before.advance()]);
      yield touched;
    }
  } finally {
    await Promise.allSettled([gone.close(), fresh.close(), before.close()]);
  }
}

/**
 * How many paths the records touch and the contents this pass hashed, read ahead of the base so its scan
 * can locate those contents. Both sources are read to their end: a spool read given up midway would be
 * cancelled while it still flows. Past `limit` paths the hashes are dropped (the delta is then given up).
 */
export async function surveyTouched(removed: AsyncIterable<RecordGroup>, added: AsyncIterable<RecordGroup>, limit: number): Promise<{ readonly paths: number; readonly hashed: ReadonlySet<string> }> {
  let paths = 0;
  const hashed = new Set<string>();
  for await (const { plus } of touchedPaths(removed, added, none())) {
    paths += 1;
    if (paths > limit) hashed.clear();
    else if (plus?.sha256 !== undefined) hashed.add(plus.sha256);
  }
  return { paths, hashed };
}

async function* none(): AsyncGenerator<ManifestItem> {
  yield* [];
}
