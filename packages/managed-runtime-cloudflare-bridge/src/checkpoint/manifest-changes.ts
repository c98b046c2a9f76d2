import type { BlobStore } from "@open-managed-agents/blob-store";
import { type BaseScan, scanBase } from "./base-scan.js";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import type { ManifestEntry } from "./manifest.js";
import type { DeltaBase } from "./manifest-delta.js";
import type { ManifestItem } from "./manifest-lines.js";
import { DeltaInconsistent, changed } from "./sandbox-delta.js";
import type { PathRecords, RecordGroup } from "./sandbox-records.js";
import { pathKey } from "./split-records.js";

/** Most paths a delta's records may touch before a full manifest is written instead. */
const MAX_TOUCHED_PATHS = 32 * 1024;

/** One line of a delta about to be written. */
export interface ChangeItem {
  readonly item: ManifestItem;
  /** Whether the sandbox's listing touched it in this pass (its content, if a file, is located afresh). */
  readonly fresh: boolean;
}

/** The workspace as a delta over a base manifest: every change since that base, sorted by path. */
export interface ManifestChanges {
  readonly base: DeltaBase;
  readonly items: readonly ChangeItem[];
  /** Entries of the workspace the delta describes. */
  readonly count: number;
  /** Bytes of its regular files. */
  readonly bytes: number;
  /** The store objects the base places contents in (see {@link BaseScan}). */
  readonly baseObjects: BaseScan["objects"];
  /** Where the base places the contents the sandbox hashed in this pass, those it holds (see {@link BaseScan}). */
  readonly baseContents: BaseScan["contents"];
}

/**
 * The next delta over `base` from the previous delta's items (`prior`, empty when the previous manifest was
 * the base itself) and the sandbox's records that changed since the pass the previous manifest was built
 * from. The base is read once, parsing only the touched paths. Null when the changes outgrow `maxItems`
 * (a full manifest is then due) or do not fit: a removal or entry the base contradicts, or a total other
 * than the `listedCount` entries the sandbox listed.
 */
export async function computeChanges(input: {
  readonly store: BlobStore;
  readonly base: ManifestHandleMetadata;
  readonly prior: readonly ManifestItem[];
  readonly removed: AsyncIterable<RecordGroup>;
  readonly added: AsyncIterable<RecordGroup>;
  readonly listedCount: number;
  readonly maxItems: number;
}): Promise<ManifestChanges | null> {
  // Paths the records touch can outnumber the delta's lines: a file hashed again because its ctime moved
  // (a rewrite of the same bytes, or a write in the seconds before the last pass's stamp) reads as touched
  // until its hash is compared with the base's. Bounded all the same: they are held in memory.
  const touchLimit = Math.max(input.maxItems, Math.min(4 * input.maxItems, MAX_TOUCHED_PATHS));
  const touched = await touchedPaths(input.removed, input.added, touchLimit);
  if (!touched || touched.size + input.prior.length > touchLimit + input.maxItems) return null;
  const prior = new Map(input.prior.map((item) => [item.path, item]));
  const wanted = new Set([...touched.keys(), ...prior.keys()]);
  // The contents hashed in this pass: the base tells where those it holds already lie.
  const hashed = new Set<string>();
  for (const { plus } of touched.values()) if (plus?.sha256 !== undefined) hashed.add(plus.sha256);
  const scan = await scanBase(input.store, input.base, wanted, hashed);
  const paths = [...wanted].map((path) => ({ path, key: pathKey(path) })).sort((a, b) => Buffer.compare(a.key, b.key));
  const items: ChangeItem[] = [];
  let count = scan.count;
  let bytes = scan.bytes;
  try {
    for (const { path } of paths) {
      const under = scan.found.get(path) ?? null;
      const before = prior.get(path);
      const old = before === undefined ? under : before.type === "removed" ? null : before;
      const touchedNow = touched.get(path);
      const now = touchedNow ? changed(old, touchedNow.minus, touchedNow.plus) : old;
      // A file hashed again only because its ctime moved (a rewrite of the same bytes) is no change.
      const change = touchedNow && !(now && old && sameEntry(now, old)) ? touchedNow : undefined;
      count += (now ? 1 : 0) - (under ? 1 : 0);
      bytes += sizeOf(now) - sizeOf(under);
      if (now === null) {
        if (under) items.push({ item: { type: "removed", path }, fresh: false });
      } else if (!change) {
        // Untouched since the previous manifest: its line stays as it was (a base entry needs none).
        if (before !== undefined) items.push({ item: before, fresh: false });
      } else items.push({ item: now, fresh: true });
    }
  } catch (error) {
    if (error instanceof DeltaInconsistent) return null;
    throw error;
  }
  if (count !== input.listedCount || items.length > input.maxItems) return null;
  return { base: { sha256: input.base.contentHash.slice("sha256:".length), size: input.base.size }, items, count, bytes, baseObjects: scan.objects, baseContents: scan.contents };
}

/** Whether two entries describe the same path alike (locations aside). */
function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  if (a.type !== b.type || a.path !== b.path || a.mode !== b.mode || a.mtime !== b.mtime) return false;
  if (a.type === "file" && b.type === "file") return a.size === b.size && a.sha256 === b.sha256;
  if (a.type === "symlink" && b.type === "symlink") return a.target === b.target;
  return true;
}

function sizeOf(entry: ManifestEntry | null): number {
  return entry?.type === "file" ? entry.size : 0;
}

/**
 * The paths the records touch, each with what it lost and gained; null past `limit` paths. Both sources
 * are read to their end either way: a spool read given up midway would be cancelled while it still flows.
 */
async function touchedPaths(removed: AsyncIterable<RecordGroup>, added: AsyncIterable<RecordGroup>, limit: number) {
  const touched = new Map<string, { minus: PathRecords | null; plus: PathRecords | null }>();
  let over = false;
  const note = (group: RecordGroup, side: "minus" | "plus") => {
    if (over) return;
    // Kept without the group's key (a buffer of its own each), and keyed by the entry's own path string
    // where there is one: held for every touched path, up to tens of thousands.
    const path = group.entry?.path ?? group.key.toString("utf8", 0, group.key.byteLength - 2);
    let change = touched.get(path);
    if (!change) touched.set(path, (change = { minus: null, plus: null }));
    change[side] = group.sha256 === undefined ? { entry: group.entry } : { entry: group.entry, sha256: group.sha256 };
    if (touched.size > limit) {
      over = true;
      touched.clear();
    }
  };
  for await (const group of removed) note(group, "minus");
  for await (const group of added) note(group, "plus");
  return over ? null : touched;
}
