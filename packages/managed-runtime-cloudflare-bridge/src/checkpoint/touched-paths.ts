import type { ManifestItem } from "./manifest-lines.js";
import type { PathRecords, RecordGroup } from "./sandbox-records.js";
import { pathKey } from "./split-records.js";

/** The delta does not fit the previous manifest: the caller takes the full listing instead. */
export class DeltaInconsistent extends Error {
  constructor(reason: string) {
    super(`the sandbox's listing delta does not fit the previous manifest (${reason})`);
  }
}

/** One path a merge looks at: what the sandbox's records lost and gained there, and the other source's item. */
export interface TouchedPath<T> {
  /** The path's key in the records: its UTF-8 bytes followed by `//`. */
  readonly key: Buffer;
  readonly path: string;
  /** What the previous pass's records said of it and no longer do; null when they said nothing of it that changed. */
  readonly minus: PathRecords | null;
  /** What this pass's records say of it that the previous pass's did not; null likewise. */
  readonly plus: PathRecords | null;
  /** The other source's item at the path (a previous delta's line, a previous manifest's entry); null likewise. */
  readonly prior: T | null;
}

/**
 * The paths the sandbox's `removed` and `added` records and a third source of manifest items (`prior`: a
 * previous delta's lines, or a previous manifest's entries) name, merged in manifest order and handed out one
 * at a time, so a merge over a large base holds none of them longer than it takes to place it: a map of
 * every touched path made the young generation of a busy driver grow to its maximum. Keys must strictly
 * increase in each source ({@link DeltaInconsistent} otherwise). Leaving early closes all three sources.
 */
export async function* touchedPaths<T extends { readonly path: string }>(
  removed: AsyncIterable<RecordGroup>,
  added: AsyncIterable<RecordGroup>,
  prior: AsyncIterable<T>,
): AsyncGenerator<TouchedPath<T>> {
  const gone = cursor(removed, (group) => group.key);
  const fresh = cursor(added, (group) => group.key);
  const before = cursor(prior, (item) => pathKey(item.path));
  try {
    await Promise.all([gone.advance(), fresh.advance(), before.advance()]);
    for (;;) {
      let key: Buffer | null = null;
      for (const candidate of [gone.key, fresh.key, before.key])
        if (candidate && (!key || Buffer.compare(candidate, key) < 0)) key = candidate;
      if (!key) return;
      const minus = gone.take(key);
      const plus = fresh.take(key);
      const item = before.take(key);
      const path =
        plus?.entry?.path ??
        minus?.entry?.path ??
        item?.path ??
        key.toString("utf8", 0, key.byteLength - 2);
      const touched: TouchedPath<T> = { key, path, minus, plus, prior: item };
      await Promise.all([
        minus && gone.advance(),
        plus && fresh.advance(),
        item && before.advance(),
      ]);
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
export async function surveyTouched(
  removed: AsyncIterable<RecordGroup>,
  added: AsyncIterable<RecordGroup>,
  limit: number,
): Promise<{ readonly paths: number; readonly hashed: ReadonlySet<string> }> {
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

/** One sorted stream's head; keys must strictly increase ({@link DeltaInconsistent} otherwise). */
function cursor<T>(source: AsyncIterable<T>, keyOf: (item: T) => Buffer) {
  const iterator = source[Symbol.asyncIterator]();
  const state = {
    item: null as T | null,
    key: null as Buffer | null,
    async advance() {
      const next = await iterator.next();
      const key = next.done ? null : keyOf(next.value);
      if (key && state.key && Buffer.compare(state.key, key) >= 0)
        throw new DeltaInconsistent("records out of order");
      state.item = next.done ? null : next.value;
      state.key = key;
    },
    take(key: Buffer): T | null {
      return state.key?.equals(key) ? state.item : null;
    },
    async close() {
      await iterator.return?.();
    },
  };
  return state;
}
