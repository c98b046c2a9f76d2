import { type ManifestEntry, fileEntry } from "./manifest.js";
import type { PathRecords, RecordGroup } from "./sandbox-records.js";
import { DeltaInconsistent, touchedPaths } from "./touched-paths.js";

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
  let count = 0;
  // Given up early, the merge closes its sources (a store read, two spool reads).
  for await (const { minus, plus, prior: old } of touchedPaths(removed, added, previous)) {
    const next = old && !minus && !plus ? plain(old) : changed(old, minus, plus);
    if (next) {
      count += 1;
      yield next;
    }
  }
  if (count !== expectedEntries)
    throw new DeltaInconsistent(`${count} entries, the sandbox listed ${expectedEntries}`);
}

/** A touched path's entry now, from its previous entry and the records it lost and gained. */
export function changed(
  old: ManifestEntry | null,
  minus: PathRecords | null,
  plus: PathRecords | null,
): ManifestEntry | null {
  const entry = plus?.entry;
  if (entry) {
    if (entry.type !== "file") return entry;
    // Unchanged hash record: the one the previous entry was built from, if that was a file.
    if (plus.sha256 !== undefined) return fileEntry(entry, plus.sha256);
    if (minus?.sha256 !== undefined || old?.type !== "file")
      throw new DeltaInconsistent("a file without a hash");
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
