import { type ManifestEntry, fileEntry } from "./manifest.js";
import type { PathRecords, RecordGroup } from "./sandbox-records.js";
import { pathKey } from "./split-records.js";

/** The delta does not fit the previous manifest: the caller takes the full listing instead. */
export class DeltaInconsistent extends Error {
  constructor(reason: string) {
    super(`the sandbox's listing delta does not fit the previous manifest (${reason})`);
  }
}

/**
 * The workspace's entries from the previous manifest and the records that changed since the pass it was
 * built from (`removed`: records only that pass had; `added`: records only this pass has), merged as three
 * sorted streams. A path neither names keeps its previous entry (without its pack location: contents are
 * located afresh); any path whose records do not fit its previous entry, or a total other than
 * `expectedEntries` (the entries this pass listed), throws {@link DeltaInconsistent}.
 */
export async function* mergeDelta(
  previous: AsyncIterable<ManifestEntry>,
  removed: AsyncIterable<RecordGroup>,
  added: AsyncIterable<RecordGroup>,
  expectedEntries: number,
): AsyncGenerator<ManifestEntry> {
  const before = cursor(previous, (entry) => pathKey(entry.path));
  const gone = cursor(removed, (group) => group.key);
  const fresh = cursor(added, (group) => group.key);
  let count = 0;
  try {
    await Promise.all([before.advance(), gone.advance(), fresh.advance()]);
    for (;;) {
      const keys = [before.key, gone.key, fresh.key].filter((key): key is Buffer => key !== null);
      if (keys.length === 0) break;
      const key = keys.reduce((least, candidate) => (Buffer.compare(candidate, least) < 0 ? candidate : least));
      const old = before.take(key);
      const minus = gone.take(key);
      const plus = fresh.take(key);
      await Promise.all([old && before.advance(), minus && gone.advance(), plus && fresh.advance()]);
      const next = old && !minus && !plus ? plain(old) : changed(old, minus, plus);
      if (next) {
        count += 1;
        yield next;
      }
    }
  } finally {
    // A merge given up early closes its sources (a store read, two spool reads).
    await Promise.allSettled([before.close(), gone.close(), fresh.close()]);
  }
  if (count !== expectedEntries) throw new DeltaInconsistent(`${count} entries, the sandbox listed ${expectedEntries}`);
}

/** A touched path's entry now, from its previous entry and the records it lost and gained. */
export function changed(old: ManifestEntry | null, minus: PathRecords | null, plus: PathRecords | null): ManifestEntry | null {
  const entry = plus?.entry;
  if (entry) {
    if (entry.type !== "file") return entry;
    // Unchanged hash record: the one the previous entry was built from, if that was a file.
    if (plus.sha256 !== undefined) return fileEntry(entry, plus.sha256);
    if (minus?.sha256 !== undefined || old?.type !== "file") throw new DeltaInconsistent("a file without a hash");
    return fileEntry(entry, old.sha256);
  }
  // Its entry record went away and none came: removed.
  if (minus?.entry) return null;
  // Its entry record is unchanged: the previous entry, with the hash that changed, if any.
  if (!old) throw new DeltaInconsistent("a hash of an unknown path");
  if (plus?.sha256 !== undefined) {
    if (old.type !== "file") throw new DeltaInconsistent("a hash of a path that is no file");
    return fileEntry(old, plus.sha256);
  }
  if (old.type === "file") throw new DeltaInconsistent("a file whose hash went away");
  return old;
}

function plain(entry: ManifestEntry): ManifestEntry {
  if (entry.type !== "file" || !entry.location) return entry;
  return fileEntry(entry, entry.sha256);
}

/** One sorted stream's head; keys must strictly increase ({@link DeltaInconsistent} otherwise). */
export function cursor<T>(source: AsyncIterable<T>, keyOf: (item: T) => Buffer) {
  const iterator = source[Symbol.asyncIterator]();
  const state = {
    item: null as T | null,
    key: null as Buffer | null,
    async advance() {
      const next = await iterator.next();
      const key = next.done ? null : keyOf(next.value);
      if (key && state.key && Buffer.compare(state.key, key) >= 0) throw new DeltaInconsistent("records out of order");
      state.item = next.done ? null : next.value;
      state.key = key;
    },
    take(key: Buffer): T | null {
      return state.key && state.key.equals(key) ? state.item : null;
    },
    async close() {
      await iterator.return?.();
    },
  };
  return state;
}
