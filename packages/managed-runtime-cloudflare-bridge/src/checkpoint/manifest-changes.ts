import type { BlobStore } from "@open-managed-agents/blob-store";
import { type BaseScan, type BaseVisitor, scanBase } from "./base-scan.js";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import type { ManifestEntry } from "./manifest.js";
import type { DeltaBase } from "./manifest-delta.js";
import type { ManifestItem } from "./manifest-lines.js";
import type { PriorLines } from "./manifest-store.js";
import { changed } from "./sandbox-delta.js";
import type { RecordGroup } from "./sandbox-records.js";
import { createSpool } from "./spool.js";
import { createLineWriter, readSpooledLines } from "./spooled-entries.js";
import {
  DeltaInconsistent,
  type TouchedPath,
  surveyTouched,
  touchedPaths,
} from "./touched-paths.js";

/** Most paths a delta's records may touch before a full manifest is written instead. */
const MAX_TOUCHED_PATHS = 32 * 1024;
/** Delta lines written to the spool at a time. */
const DELTA_CHUNK_LINES = 256;

/** One line of a delta about to be written. */
export interface ChangeItem {
  readonly item: ManifestItem;
  /** Whether the sandbox's listing touched it in this pass (its content, if a file, is located afresh). */
  readonly fresh: boolean;
}

/** The workspace as a delta over a base manifest: every change since that base, sorted by path. */
export interface ManifestChanges {
  readonly base: DeltaBase;
  /** The delta's lines, read afresh from the driver's spool on every call, until {@link dispose}. */
  items(): AsyncIterable<ChangeItem>;
  /** How many lines it holds. */
  readonly itemCount: number;
  /** Removes the spool of its lines. Idempotent. */
  dispose(): Promise<void>;
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
 * The next delta over `base` from the previous delta's lines (`prior`, none when the previous manifest was
 * the base itself) and the sandbox's records that changed since the pass the previous manifest was built
 * from (`removed`, `added`: each opened afresh for every read). The records are read once ahead for the
 * contents they hash, then merged with `prior` and the base as the base streams past (see {@link scanBase}),
 * each path placed (its line, if it has one, written to a spool) and let go as the scan meets it. Null when
 * the changes outgrow `maxItems` (a full manifest is then due) or do not fit: a record the base contradicts,
 * or a total other than the `listedCount` entries the sandbox listed.
 */
export async function computeChanges(input: {
  readonly store: BlobStore;
  readonly base: ManifestHandleMetadata;
  readonly prior: PriorLines;
  readonly removed: () => AsyncIterable<RecordGroup>;
  readonly added: () => AsyncIterable<RecordGroup>;
  readonly listedCount: number;
  readonly maxItems: number;
  /** Where the delta's lines wait until they are written: they are only ever read in order. */
  readonly spool: { readonly maxBytes: number; readonly directory?: string };
  /** The scan of `base` (see {@link scanBase}), when it was read ahead (see `prescanBase`). */
  readonly scan?: (contents: ReadonlySet<string>, visitor: BaseVisitor) => Promise<BaseScan>;
}): Promise<ManifestChanges | null> {
  // Paths the records touch can outnumber the delta's lines: a file hashed again because its ctime moved
  // (a rewrite of the same bytes, or a write in the seconds before the last pass's stamp) reads as touched
  // until its hash is compared with the base's.
  const touchLimit = Math.max(input.maxItems, Math.min(4 * input.maxItems, MAX_TOUCHED_PATHS));
  const survey = await surveyTouched(input.removed(), input.added(), touchLimit);
  if (survey.paths > touchLimit || survey.paths + input.prior.count > touchLimit + input.maxItems)
    return null;
  // The lines go to a spool as they are placed, a few at a time: held as objects until the manifest is
  // written, they grew with the change count (about 8.5 MiB of heap at 32,768 lines), and chunks of 2,048
  // lines are strings large enough for V8's large-object space.
  const spool = await createSpool(input.spool);
  const lines = createLineWriter(spool, DELTA_CHUNK_LINES);
  let itemCount = 0;
  const push = (item: ChangeItem) => {
    itemCount += 1;
    if (itemCount > input.maxItems) throw new DeltaInconsistent("more changes than a delta holds");
    return lines.add(item);
  };
  // Entries and file bytes the delta adds to the base's (negative where it removes or shrinks).
  let count = 0;
  let bytes = 0;
  const place = (
    { path, minus, plus, prior: before }: TouchedPath<ManifestItem>,
    under: ManifestEntry | null,
  ): Promise<void> | undefined => {
    const old = before === null ? under : before.type === "removed" ? null : before;
    const touched = minus !== null || plus !== null;
    const now = touched ? changed(old, minus, plus) : old;
    // A file hashed again only because its ctime moved (a rewrite of the same bytes) is no change.
    const change = touched && !(now && old && sameEntry(now, old));
    count += (now ? 1 : 0) - (under ? 1 : 0);
    bytes += sizeOf(now) - sizeOf(under);
    if (now === null)
      return under ? push({ item: { type: "removed", path }, fresh: false }) : undefined;
    // Untouched since the previous manifest: its line stays as it was (a base entry needs none).
    if (!change) return before !== null ? push({ item: before, fresh: false }) : undefined;
    return push({ item: now, fresh: true });
  };
  const paths = touchedPaths(input.removed(), input.added(), input.prior.items());
  let current: TouchedPath<ManifestItem> | null = null;
  // The path's bytes, asked for at every base line the scan passes.
  let currentBytes: Buffer | null = null;
  const advance = async () => {
    const next = await paths.next();
    current = next.done ? null : next.value;
    currentBytes = current ? current.key.subarray(0, current.key.byteLength - 2) : null;
  };
  const visitor: BaseVisitor = {
    next: () => currentBytes,
    async take(under) {
      if (current) await place(current, under);
      await advance();
    },
  };
  let kept = false;
  try {
    await advance();
    const scan = await (input.scan
      ? input.scan(survey.hashed, visitor)
      : scanBase(input.store, input.base, survey.hashed, visitor));
    count += scan.count;
    bytes += scan.bytes;
    if (count !== input.listedCount) return null;
    await lines.flush();
    await spool.finish();
    kept = true;
    return {
      base: { sha256: input.base.contentHash.slice("sha256:".length), size: input.base.size },
      items: () =>
        readSpooledLines<ChangeItem>(spool.read() as unknown as AsyncIterable<Uint8Array>),
      itemCount,
      dispose: () => spool.dispose(),
      count,
      bytes,
      baseObjects: scan.objects,
      baseContents: scan.contents,
    };
  } catch (error) {
    if (error instanceof DeltaInconsistent) return null;
    throw error;
  } finally {
    if (!kept) await spool.dispose();
    // A merge given up early closes its record reads.
    await paths.return(undefined);
  }
}

/** Whether two entries describe the same path alike (locations aside). */
function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  if (a.type !== b.type || a.path !== b.path || a.mode !== b.mode || a.mtime !== b.mtime)
    return false;
  if (a.type === "file" && b.type === "file") return a.size === b.size && a.sha256 === b.sha256;
  if (a.type === "symlink" && b.type === "symlink") return a.target === b.target;
  return true;
}

function sizeOf(entry: ManifestEntry | null): number {
  return entry?.type === "file" ? entry.size : 0;
}
