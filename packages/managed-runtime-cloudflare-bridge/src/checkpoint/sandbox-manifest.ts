import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import { type BridgeFiles, createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import type { ManifestEntry } from "./manifest.js";
import type { ManifestChanges } from "./manifest-changes.js";
import { mergeDelta } from "./sandbox-delta.js";
import {
  HashMissing,
  type RecordGroup,
  parseSandboxRecords,
  recordGroups,
} from "./sandbox-records.js";
import { sparseFile } from "./capture-refusals.js";
import {
  SANDBOX_CACHE,
  largeFileActions,
  parseSparseLine,
  pruneExpression,
  sparseCheck,
} from "./sandbox-scripts.js";
import { type WalkOutput, parallelWalk } from "./sandbox-walk.js";
import { type Spool, createSpool } from "./spool.js";
import { readSpooledEntries, spoolEntries } from "./spooled-entries.js";

const CACHE = SANDBOX_CACHE;

/** The workspace's entries as the sandbox reported them, spooled on the driver's disk, or only what changed. */
export type SandboxManifest = SandboxListing | SandboxChanges;

/** What changed since the session's previous manifest, as a delta over its base (see {@link ManifestChanges}). */
export interface SandboxChanges {
  readonly kind: "changes";
  readonly changes: ManifestChanges;
  /** Always true: a delta comes only from the sandbox's cached pass. */
  readonly cached: true;
  dispose(): Promise<void>;
}

/** Every entry of the workspace. */
export interface SandboxListing {
  readonly kind: "listing";
  /** The entries in manifest order, parsed afresh from the spool on each call. */
  entries(): AsyncIterable<ManifestEntry>;
  /** Whether some hashes came from the sandbox's cache (a mismatch then means: take it again without). */
  readonly cached: boolean;
  /** Whether the entries are the previous manifest merged with the sandbox's delta (not the full listing). */
  readonly delta: boolean;
  /** Deletes the spool. */
  dispose(): Promise<void>;
}

/**
 * Computes the manifest of `/workspace` inside the sandbox: one `find` for types, modes, sizes, mtimes and
 * link targets, `sha256sum` over the regular files (only over those changed, by mtime or ctime, since the
 * last pass in this sandbox when its hashes are cached), both joined into one sorted record file there, so
 * the driver fetches it with one file GET into a spool and reads it as a stream, never whole. `check` gets
 * the first read of the entries; a cache that missed a file (other excludes, a clock step) is passed over
 * and everything hashed again.
 */
export async function readSandboxManifest(input: {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly excludes: readonly string[];
  readonly maxRequestBytes: number;
  readonly maxBytes: number;
  readonly spoolDirectory?: string;
  readonly check: (entries: AsyncIterable<ManifestEntry>) => Promise<void>;
  /** This pass's id, kept with the sandbox's cache (and, once published, in the session's latest pointer). */
  readonly pass: string;
  /**
   * The session's previous published manifest and the pass it was built from, when known. `changes` gets
   * the first try at the sandbox's delta: it answers the delta manifest to write, or null to have the
   * delta merged into a full listing.
   */
  readonly previous?: {
    readonly pass: string;
    entries(): AsyncIterable<ManifestEntry>;
    changes?(
      removed: () => AsyncIterable<RecordGroup>,
      added: () => AsyncIterable<RecordGroup>,
      listedCount: number,
    ): Promise<ManifestChanges | null>;
    /** Called when the pass asks for no delta (another pass's cache, a full listing): stops work begun for one. */
    release?(): Promise<void>;
  };
  readonly signal?: AbortSignal;
}): Promise<SandboxManifest> {
  const { client, sandboxId, signal } = input;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: input.maxRequestBytes });
  const name = `.oma-manifest-${crypto.randomUUID()}`;
  const directory = `/workspace/${name}`;
  const prune = [`-path ./${name}`, ...input.excludes.map(pruneExpression)].join(" -o ");
  const entries: WalkOutput = { file: `${directory}/entries`, relative: true };
  const changedFiles: WalkOutput = { file: `${directory}/files`, relative: false };
  const large: WalkOutput = { file: `${directory}/large`, relative: false };
  // Every entry's record and the regular files to hash (those newer than `stamp`, or all), and the files that
  // may be sparse: several finds at once. A sparse file ends the pass with `sparse …` before anything is hashed.
  const walk = (stamp: string | null) =>
    parallelWalk({
      prune,
      scratch: directory,
      outputs: [entries, changedFiles, large],
      actions: (path, into) =>
        `-fprintf ${into(entries)} '${path}//e%y %m %s %T@ %l\\0' , \\( -type f ${stamp === null ? "" : `\\( -newer ${stamp} -o -cnewer ${stamp} \\) `}-fprint0 ${into(changedFiles)} \\) , \\( ${largeFileActions(path, into(large))} \\)`,
    }) +
    ` && sparse=$(${sparseCheck(large.file)}) && if [ -n "$sparse" ]; then printf '%s\\n' "$sparse"; exit 0; fi`;
  // A file that vanished or cannot be read (sha256sum fails, xargs exits 123) is left without a hash: the
  // driver refuses the checkpoint naming it, where a failed pass could not say which file it was.
  const hash = (list: string, into: string) =>
    `{ xargs -0 -r sha256sum -z < ${directory}/${list} > ${directory}/${into} 2>/dev/null; [ $? -le 123 ]; }`;
  // Every regular file again, when cached hashes turned out incomplete (the entries are listed by then).
  const hashAll = `${parallelWalk({ prune, scratch: directory, outputs: [changedFiles], actions: (_path, into) => `-type f -fprint0 ${into(changedFiles)}` })} && ${hash("files", "merged")}`;
  // The entry records sorted once: the next pass's cache, and (merged with the hash records) this pass's records.
  const sortEntries = `LC_ALL=C sort -z ${directory}/entries > ${directory}/listing`;
  // Hash lines (`<sha256>  ./<path>`) become `<path>//h<sha256>` records, by byte columns (a sed regex here
  // took over a second per 200,000 files); merged into the sorted entries, each lands right after its own.
  // Only the hash records are sorted here: a later pass hashes few files, and a merge is one linear read.
  const hashRecords =
    `LC_ALL=C cut -z -c69- ${directory}/merged > ${directory}/paths && LC_ALL=C cut -z -c1-64 ${directory}/merged > ${directory}/digests && ` +
    `LC_ALL=C paste -z -d '//h' ${directory}/paths /dev/null /dev/null ${directory}/digests | LC_ALL=C sort -z > ${directory}/hashes && ` +
    `rm -f ${directory}/paths ${directory}/digests`;
  const records = `${hashRecords} && LC_ALL=C sort -z -m ${directory}/listing ${directory}/hashes > ${directory}/records && rm -f ${directory}/hashes`;
  // What changed since the cached pass, in one read of both listings: `comm` prints the records only the cache
  // has as they are and those only this listing has behind a `/` (no record starts with one: paths are
  // relative), split apart by that mark; every hash record counts as gained (the cache holds none), merged in
  // so each lands right after its own entry. A cache that is not a sorted record list only loses the delta:
  // the driver then hashes everything.
  const differences =
    `LC_ALL=C comm -z --nocheck-order -3 --output-delimiter=/ ${CACHE}/records ${directory}/listing > ${directory}/differ 2>/dev/null && ` +
    `{ LC_ALL=C grep -a -z -v '^/' ${directory}/differ > ${directory}/removed; [ $? -le 1 ]; } && ` +
    `{ LC_ALL=C grep -a -z '^/' ${directory}/differ > ${directory}/gained; [ $? -le 1 ]; } && ` +
    `LC_ALL=C cut -z -c2- ${directory}/gained | LC_ALL=C sort -z -m - ${directory}/hashes > ${directory}/added`;
  // The cache holds the sorted entry records of the pass the previous manifest was built from: this pass
  // then hashes only files changed since its stamp (by mtime or ctime) and reports the records that differ;
  // any other cache (none, another pass's, unreadable) means hashing every file.
  const expected = input.previous?.pass;
  const matching =
    expected === undefined
      ? "false"
      : `[ -f ${CACHE}/stamp ] && [ -f ${CACHE}/records ] && [ "$(cat ${CACHE}/pass 2>/dev/null)" = ${shellQuote(expected)} ]`;
  // The pass's folder and stamp, then `/workspace` as the working folder. Two seconds back: a write in the
  // same clock tick as the stamp still counts as newer next time.
  const begin = `mkdir -p ${directory} && touch -d "@$(( $(date +%s) - 2 ))" ${directory}/stamp && cd /workspace`;
  // A pass that hashes every file.
  const full = `${walk(null)} && ${sortEntries} && ${hash("files", "merged")} && ${records}`;
  const script =
    `${begin} && if ${matching}; then ` +
    // No record file: the driver takes the delta, or hashes everything before it reads the full listing.
    `${walk(`${CACHE}/stamp`)} && ${sortEntries} && ${hash("files", "merged")} && ${hashRecords} && ` +
    `echo partial && { ${differences} && echo "delta $(head -c 64 ${CACHE}/pass) $(tr -cd '\\0' < ${directory}/entries | wc -c)" || true; }; ` +
    `else ${full} && echo full; fi`;
  const chunks = (spool: Spool) => spool.read() as unknown as AsyncIterable<Uint8Array>;
  const read = (spool: Spool, partial: boolean) => () =>
    parseSandboxRecords(chunks(spool), partial);
  const spoolOptions = {
    maxBytes: input.maxBytes,
    ...(input.spoolDirectory === undefined ? {} : { directory: input.spoolDirectory }),
  };
  const fetch = async (file = "records") => {
    const spool = await createSpool(spoolOptions);
    try {
      await spool.append(await client.readFile(sandboxId, `${directory}/${file}`, signal), signal);
      await spool.finish();
      return spool;
    } catch (error) {
      await spool.dispose();
      throw error;
    }
  };
  let listingRemoved = false;
  // This pass's listing kept as the sandbox's cache, once nothing more is read from the folder: best effort
  // (a failure only costs the next pass its shortcuts), and the listing's folder goes in the same call.
  let kept: Promise<void> | undefined;
  const keepListing = () =>
    files
      .run(
        `{ mkdir -p ${CACHE} && rm -f ${CACHE}/pass ${CACHE}/hashes && mv ${directory}/listing ${CACHE}/records && mv ${directory}/stamp ${CACHE}/stamp && printf '%s' ${shellQuote(input.pass)} > ${CACHE}/pass; } 2>/dev/null || rm -rf ${CACHE}; rm -rf ${directory}`,
        signal,
      )
      .then(
        () => void (listingRemoved = true),
        () => undefined,
      );
  try {
    const [pass = "", delta] = (await files.run(script, signal)).trim().split("\n");
    const sparse = parseSparseLine(pass);
    if (sparse) throw sparseFile(sparse.path, sparse.size, sparse.allocated);
    let cached = pass === "partial";
    const changed = input.previous && cached ? await fromDelta(input.previous, delta) : null;
    // No delta is asked for: whatever was begun for one stops before the full listing is read.
    if (!changed) await input.previous?.release?.();
    const listed = changed ?? (await fromListing());
    await (kept ?? keepListing());
    return listed;

    /**
     * What changed since the previous manifest, as a delta or merged with that manifest into a full listing,
     * when the sandbox's cache is the pass that manifest was built from; null (take the full listing) when it
     * is not or anything in the merge does not fit.
     */
    async function fromDelta(
      previous: NonNullable<typeof input.previous>,
      line: string | undefined,
    ): Promise<SandboxManifest | null> {
      const [, cachedPass, listedCount] = /^delta ([0-9a-f-]{36}) (\d+)$/.exec(line ?? "") ?? [];
      if (cachedPass !== previous.pass || listedCount === undefined) return null;
      const removed = await fetch("removed");
      const added = await fetch("added").catch(async (error: unknown) => {
        await removed.dispose();
        throw error;
      });
      // Both record files are read: the cache is kept while the driver works out the delta.
      kept = keepListing();
      // A delta over the previous manifest's base first (its lines in a spool of their own, so the record
      // spools can go); the merge into a full listing when it does not fit or has grown too large.
      // Opened only when read: a delta given up before its records are read leaves no spool read open.
      const groups = async function* (spool: Spool) {
        yield* recordGroups(chunks(spool), true);
      };
      const changes = await previous
        .changes?.(
          () => groups(removed),
          () => groups(added),
          Number(listedCount),
        )
        .catch(() => null);
      if (changes) {
        await Promise.all([removed.dispose(), added.dispose()]);
        return { kind: "changes", changes, cached: true, dispose: () => changes.dispose() };
      }
      // The merge runs once: its entries are spooled as they are checked and read back from there.
      const merged = await createSpool(spoolOptions);
      const dispose = async () =>
        void (await Promise.all([removed.dispose(), added.dispose(), merged.dispose()]));
      try {
        const entries = mergeDelta(
          previous.entries(),
          recordGroups(chunks(removed), true),
          recordGroups(chunks(added), true),
          Number(listedCount),
        );
        await input.check(spoolEntries(entries, merged));
        await merged.finish();
        return {
          kind: "listing",
          entries: () => readSpooledEntries(chunks(merged)),
          cached: true,
          delta: true,
          dispose,
        };
      } catch {
        // Whatever did not fit (a stale or altered cache, a swept manifest): the full listing decides.
        await dispose();
        return null;
      } finally {
        await Promise.all([removed.dispose(), added.dispose()]);
      }
    }

    /**
     * The full listing, checked. A pass that hashed only changed files (its delta did not fit) lacks the rest,
     * so everything is hashed first; a listing that still misses a hash is hashed again once more.
     */
    async function fromListing(): Promise<SandboxManifest> {
      if (kept) {
        // The delta's folder went with the kept cache: the pass is taken again, hashing every file.
        await kept;
        kept = undefined;
        listingRemoved = false;
        await files.run(`${begin} && ${full}`, signal);
        cached = false;
      } else if (cached) {
        await files.run(`cd /workspace && ${hashAll} && ${records}`, signal);
        cached = false;
      }
      let spool = await fetch();
      try {
        try {
          await input.check(read(spool, cached)());
        } catch (error) {
          if (!(error instanceof HashMissing)) throw error;
          await spool.dispose();
          await files.run(`cd /workspace && ${hashAll} && ${records}`, signal);
          cached = false;
          spool = await fetch();
          await input.check(read(spool, false)());
        }
      } catch (error) {
        await spool.dispose();
        throw error;
      }
      const done = spool;
      return {
        kind: "listing",
        entries: read(done, cached),
        cached,
        delta: false,
        dispose: () => done.dispose(),
      };
    }
  } finally {
    // A keep still running settles first: it removes the folder itself when it succeeds.
    await kept;
    if (!listingRemoved) await files.run(`rm -rf ${directory}`).catch(() => undefined);
  }
}

/** Drops the sandbox's hash cache (after a content did not match its hash), so the next pass hashes all. */
export async function forgetHashCache(files: BridgeFiles): Promise<void> {
  await files.run(`rm -rf ${CACHE}`).catch(() => undefined);
}
