import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  ManagedRuntimeError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { blobKeyOf, manifestKeyOf, packKeyOf, sessionKeyOf } from "./blob-keys.js";
import { createContentTransfer } from "./content-transfer.js";
import { createLimiter } from "./limiter.js";
import { createDigestSet } from "./digest-set.js";
import type { ManifestEntry, PackLocation } from "./manifest.js";
import { checkTotals, inspectManifest } from "./manifest-checks.js";
import {
  MANIFEST_HANDLE_FORMAT,
  type ManifestHandleMetadata,
  createManifestHandle,
} from "./manifest-handle.js";
import { type ManifestChanges, computeChanges } from "./manifest-changes.js";
import { deltaHeaderLine } from "./manifest-delta.js";
import { deltaPartsOf, streamManifestOnce } from "./manifest-store.js";
import { prescanBase } from "./base-prescan.js";
import {
  type LatestManifest,
  createPackedContentsCollector,
  latestManifest,
  recallLatest,
} from "./latest-manifest.js";
import { SMALL_BLOB_BYTES } from "./pack-writer.js";
import { type RestoreArchive, assembleRestoreArchive } from "./restore-archive.js";
import { forgetHashCache, readSandboxManifest } from "./sandbox-manifest.js";
import { seedListingCache } from "./sandbox-scripts.js";
import type { RecordGroup } from "./sandbox-records.js";
import { sweepGeneration, withCheckpointLock } from "./session-locks.js";
import { NO_STORED_CONTENTS, type StoredContents, unionOf } from "./stored-contents.js";
import { collectMissingContents } from "./missing-contents.js";
import { createManifestWriter } from "./manifest-writer.js";
import { allStored } from "./stored-objects.js";
import { type Codec, zstdSupport } from "./codec.js";
import { captureStreamed } from "./streamed-capture.js";

/** Options of {@link createIncrementalCheckpoints}; validated by the driver factory. */
export interface IncrementalCheckpointOptions {
  readonly provider: string;
  readonly client: BridgeClient;
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly excludes: readonly string[];
  readonly partBytes: number;
  readonly maxRequestBytes: number;
  readonly maxCheckpointBytes: number;
  readonly archiveLimits: ArchiveLimits;
  /** How transfers are compressed (see the driver option). @default "auto" */
  readonly compression?: "auto" | "gzip" | "off";
  readonly spoolDirectory?: string;
}

/** Store calls in flight for existence checks. */
const PARALLEL_STORE_CALLS = 8;

/** Sessions whose stored hashes are remembered between checkpoints; older ones are forgotten first. */
const KNOWN_SESSIONS = 64;

/**
 * Most lines a delta manifest holds before the next checkpoint writes a full one: an eighth of the
 * workspace's entries, within these bounds (a delta is held in memory while it is written).
 */
const MIN_DELTA_ITEMS = 1024;
const MAX_DELTA_ITEMS = 32 * 1024;

/**
 * Incremental checkpoints: a manifest computed in the sandbox plus content blobs stored once by hash under
 * the session's own prefix. Only content the store lacks crosses the bridge, as one tar of just those files
 * fetched in parts; the manifest is stored last, so an interrupted checkpoint publishes nothing.
 */
export function createIncrementalCheckpoints(options: IncrementalCheckpointOptions) {
  const { client, store } = options;
  // The session's latest manifest as this driver published or restored it, and the sweep generation it was
  // seen in (a sweep since may have collected what it places contents in). No set of the session's contents is
  // kept: a delta learns where its changed contents already lie from its base, which it reads anyway, and a
  // full listing from the previous manifest; memory does not grow with the workspace or the sessions served.
  const known = new Map<string, { readonly generation: number; readonly latest: LatestManifest }>();
  const remember = (session: string, generation: number, latest: LatestManifest) => {
    known.delete(session);
    known.set(session, { generation, latest });
    if (known.size > KNOWN_SESSIONS) known.delete(known.keys().next().value as string);
  };
  const lockKey = (session: string) => `${options.keyPrefix}\0${session}`;
  const contents = createContentTransfer(options);
  const spoolOptions = {
    maxBytes: options.maxCheckpointBytes,
    ...(options.spoolDirectory === undefined ? {} : { directory: options.spoolDirectory }),
  };
  const manifests = createManifestWriter({
    store,
    keyPrefix: options.keyPrefix,
    spool: spoolOptions,
  });

  /**
   * The contents the session has stored, and those of `entries` still to send (each content once), spooled:
   * a first checkpoint sends every file, too many to hold as objects.
   */
  const planContents = async (
    session: string,
    entries: AsyncIterable<ManifestEntry>,
    previous: Previous | undefined,
    override?: StoredContents,
  ) => {
    // The session's latest manifest tells (the one this driver published or restored, else the pointer's), from
    // the listing delta's own read of it when that read was whole, or from a read of its own.
    const recalled = previous?.recalled();
    const remembered = known.get(session);
    const latest =
      remembered && remembered.generation === sweepGeneration(store, lockKey(session))
        ? remembered.latest
        : undefined;
    const stored =
      override ??
      (recalled
        ? await recalled.resolve(store, options.keyPrefix, session)
        : await recallLatest(store, options.keyPrefix, session, latest));
    const seen = createDigestSet();
    const missing = await collectMissingContents(spoolOptions);
    try {
      // Several HEADs at a time: after a driver restart every large hash is unknown and one round trip each adds up.
      const heads = createLimiter(PARALLEL_STORE_CALLS);
      for await (const entry of entries) {
        if (
          entry.type !== "file" ||
          entry.size === 0 ||
          stored.get(entry.sha256) !== undefined ||
          !seen.add(entry.sha256)
        )
          continue;
        if (entry.size <= SMALL_BLOB_BYTES) missing.add(entry);
        else {
          await heads.run(async () => {
            if ((await store.head(blobKeyOf(options.keyPrefix, session, entry.sha256))) === null)
              missing.add(entry);
          });
        }
        await missing.flushed();
      }
      await heads.drain();
      return { stored, missing: await missing.finish() };
    } catch (error) {
      await missing.dispose();
      throw error;
    }
  };

  /**
   * The session's previous published manifest and its sandbox pass, for a listing delta against it. As a
   * delta over its base (`changes`) when that fits; else its entries are read once, hash-checked as they
   * stream (a mismatch fails the merge, which then takes the full listing), and the packed contents they
   * name are collected on the way for {@link planContents}.
   */
  const previousOf = async (
    session: string,
    latest: LatestManifest | null,
  ): Promise<Previous | undefined> => {
    if (!latest?.pass) return undefined;
    const metadata = {
      format: MANIFEST_HANDLE_FORMAT,
      session,
      contentHash: `sha256:${latest.sha256}`,
      size: latest.size,
      manifestKey: manifestKeyOf(options.keyPrefix, session, latest.sha256),
    } as const;
    let whole: ReturnType<typeof createPackedContentsCollector> | undefined;
    // The base is read (hash-checked, counted, copied to the driver's disk) while the sandbox walks the
    // workspace, so only a light second read of it waits for the sandbox's changes. A read that fails only
    // fails the delta, as a scan after the walk would.
    const ahead = new AbortController();
    const prepared = deltaPartsOf(store, metadata, latest.delta === true).then(async (parts) => {
      if (!parts) return null;
      const base = await prescanBase(store, parts.base, {
        ...(options.spoolDirectory === undefined ? {} : { directory: options.spoolDirectory }),
        signal: ahead.signal,
      });
      return { parts, base };
    });
    const settled = prepared.catch(() => null);
    return {
      pass: latest.pass,
      async release() {
        ahead.abort();
        await (await settled)?.base.dispose();
      },
      async *entries() {
        // Blobs of their own count as stored when this driver published or restored the manifest since the last sweep.
        const remembered = known.get(session);
        const collector = createPackedContentsCollector({
          blobs:
            remembered !== undefined &&
            remembered.generation === sweepGeneration(store, lockKey(session)) &&
            remembered.latest.sha256 === latest.sha256,
        });
        for await (const entry of streamManifestOnce(store, metadata)) {
          collector.add(entry);
          yield entry;
        }
        // Only a read that reached the end (and so matched its hash) counts.
        whole = collector;
      },
      recalled: () => whole,
      async changes(removed, added, listedCount) {
        const ready = await prepared;
        if (!ready) return null;
        const { parts, base } = ready;
        const maxItems = Math.min(
          MAX_DELTA_ITEMS,
          Math.max(MIN_DELTA_ITEMS, Math.floor(listedCount / 8)),
        );
        const changes = await computeChanges({
          store,
          base: parts.base,
          prior: parts.prior,
          removed,
          added,
          listedCount,
          maxItems,
          spool: spoolOptions,
          scan: base.scan,
        }).finally(() => base.dispose());
        if (!changes) return null;
        try {
          // A sweep since (or a driver that never saw the session) may have collected what the base places
          // contents in while keeping the base: then a full manifest is due.
          const remembered = known.get(session);
          if (
            !(remembered && remembered.generation === sweepGeneration(store, lockKey(session))) &&
            !(await allStored(store, objectKeys(session, changes.baseObjects)))
          ) {
            await changes.dispose();
            return null;
          }
          // The restore rules for every line that changed, the limits for the whole workspace.
          await inspectManifest(entriesOf(changes), options.archiveLimits);
          checkTotals(changes, options.archiveLimits);
          return changes;
        } catch (error) {
          await changes.dispose();
          throw error;
        }
      },
    };
  };

  const objectKeys = (session: string, objects: ManifestChanges["baseObjects"]) => [
    ...objects.packs.map((sha256) => packKeyOf(options.keyPrefix, session, sha256)),
    ...objects.blobs.map((sha256) => blobKeyOf(options.keyPrefix, session, sha256)),
  ];

  /**
   * Stores the contents a delta's fresh lines need and publishes the delta manifest: only what changed
   * since the base crosses the bridge and is written, whatever the workspace's size.
   */
  const captureChanges = async (
    input: { readonly sandboxId: string; readonly signal?: AbortSignal },
    session: string,
    changes: ManifestChanges,
    generation: number,
    pass: string,
    retried: boolean,
  ) => {
    // Contents the delta's untouched lines place, and those of the base the changed lines name again: stored,
    // since the latest manifest names them.
    const carried = createPackedContentsCollector();
    for await (const { item, fresh } of changes.items())
      if (!fresh && item.type === "file") carried.add(item);
    const stored = unionOf(
      mapContents(changes.baseContents),
      await carried.resolve(store, options.keyPrefix, session),
    );
    const fresh = (async function* () {
      for await (const { item, fresh: touched } of changes.items())
        if (touched && item.type === "file") yield item;
    })();
    const { missing } = await planContents(session, fresh, undefined, stored);
    const packed = await transferMissing(input, session, missing, true, retried);
    const lines = (async function* () {
      for await (const { item } of changes.items()) yield item;
    })();
    const written = await manifests.write(
      lines,
      (sha256) => packed.get(sha256) ?? stored.get(sha256) ?? null,
      deltaHeaderLine(changes.base),
    );
    const latest = await manifests.publish(session, written, pass, true);
    remember(session, generation, latest);
    return createManifestHandle({
      provider: options.provider,
      sandboxId: input.sandboxId,
      session,
      sha256: latest.sha256,
      size: latest.size,
    });
  };

  /**
   * Sends the missing contents; a content that did not match its hash may have come from the sandbox's
   * hash cache: the cache is dropped and the checkpoint taken once more, hashing everything.
   */
  const transferMissing = async (
    input: { readonly sandboxId: string; readonly signal?: AbortSignal },
    session: string,
    missing: Awaited<ReturnType<typeof planContents>>["missing"],
    cached: boolean,
    retried: boolean,
  ) =>
    (missing.count > 0
      ? codecs().then((allowed) =>
          contents.transfer(input.sandboxId, session, missing, allowed, input.signal),
        )
      : Promise.resolve(NO_STORED_CONTENTS)
    )
      .catch(async (error: unknown) => {
        if (!cached || retried || !ManagedRuntimeError.hasCode(error, "sandbox_failed"))
          throw error;
        await forgetHashCache(
          createBridgeFiles(client, input.sandboxId, { maxRequestBytes: options.maxRequestBytes }),
        );
        throw new CacheMissed(error);
      })
      .finally(() => missing.dispose());

  /** The codecs a transfer may use, in preference order. */
  const codecs = async (): Promise<Codec[]> => {
    const compression = options.compression ?? "auto";
    if (compression === "off") return [];
    if (compression === "gzip") return ["gzip"];
    return (await zstdSupport()) ? ["zstd", "gzip"] : ["gzip"];
  };

  /**
   * A first checkpoint of a session (nothing stored, nothing remembered): every content must cross, so the
   * sandbox archives the workspace once and the driver hashes it as it arrives.
   */
  const captureFirst = async (
    input: { readonly sandboxId: string; readonly signal?: AbortSignal },
    session: string,
    generation: number,
    pass: string,
  ) => {
    const written = await captureStreamed({
      client,
      store,
      keyPrefix: options.keyPrefix,
      sandboxId: input.sandboxId,
      session,
      pass,
      excludes: options.excludes,
      partBytes: options.partBytes,
      maxRequestBytes: options.maxRequestBytes,
      maxCheckpointBytes: options.maxCheckpointBytes,
      archiveLimits: options.archiveLimits,
      spool: spoolOptions,
      codecs: await codecs(),
      stored: NO_STORED_CONTENTS,
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    const latest = await manifests.publish(session, written, pass);
    remember(session, generation, latest);
    return createManifestHandle({
      provider: options.provider,
      sandboxId: input.sandboxId,
      session,
      sha256: latest.sha256,
      size: latest.size,
    });
  };

  const capture = async (
    input: { readonly sandboxId: string; readonly signal?: AbortSignal },
    session: string,
    retried = false,
  ): Promise<SandboxCheckpointHandle> => {
    const generation = sweepGeneration(store, lockKey(session));
    const pass = crypto.randomUUID();
    const remembered = known.get(session);
    const latest = remembered?.latest ?? (await latestManifest(store, options.keyPrefix, session));
    if (!retried && !remembered && !latest) return captureFirst(input, session, generation, pass);
    // A retry after a cached hash did not match takes the full listing.
    const previous = retried ? undefined : await previousOf(session, latest);
    try {
      return await captureListed(input, session, generation, pass, retried, previous);
    } finally {
      await previous?.release();
    }
  };

  const captureListed = async (
    input: { readonly sandboxId: string; readonly signal?: AbortSignal },
    session: string,
    generation: number,
    pass: string,
    retried: boolean,
    previous: Previous | undefined,
  ): Promise<SandboxCheckpointHandle> => {
    const listed = await readSandboxManifest({
      pass,
      ...(previous === undefined ? {} : { previous }),
      client,
      sandboxId: input.sandboxId,
      excludes: options.excludes,
      maxRequestBytes: options.maxRequestBytes,
      ...spoolOptions,
      ...(options.spoolDirectory === undefined ? {} : { spoolDirectory: options.spoolDirectory }),
      check: (entries) => inspectManifest(entries, options.archiveLimits),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    try {
      if (listed.kind === "changes")
        return await captureChanges(input, session, listed.changes, generation, pass, retried);
      const { stored, missing } = await planContents(session, listed.entries(), previous);
      const packed = await transferMissing(input, session, missing, listed.cached, retried);
      const written = await manifests.write(
        listed.entries(),
        (sha256) => packed.get(sha256) ?? stored.get(sha256) ?? null,
      );
      const latest = await manifests.publish(session, written, pass);
      remember(session, generation, latest);
      return createManifestHandle({
        provider: options.provider,
        sandboxId: input.sandboxId,
        session,
        sha256: latest.sha256,
        size: latest.size,
      });
    } finally {
      await listed.dispose();
    }
  };

  return {
    async checkpoint(input: {
      readonly sandboxId: string;
      readonly sessionId: string;
      readonly signal?: AbortSignal;
    }): Promise<SandboxCheckpointHandle> {
      const session = sessionKeyOf(input.sessionId);
      return withCheckpointLock(store, lockKey(session), () =>
        capture(input, session).catch((error: unknown) =>
          error instanceof CacheMissed ? capture(input, session, true) : Promise.reject(error),
        ),
      );
    },
    /**
     * Assembles the tar a restore sends from the manifest and the session's blobs, in one pass over the
     * manifest; every content is hashed on its way and a mismatch is `integrity_failed` before any byte
     * leaves the driver. When the manifest is the session's latest, the sandbox's listing cache is seeded
     * once the archive is extracted (`afterExtract`), so the next checkpoint there hashes only what changed.
     */
    async assemble(
      metadata: ManifestHandleMetadata,
      restoringSession: string | undefined,
    ): Promise<{ readonly archive: RestoreArchive; readonly afterExtract?: string }> {
      if (restoringSession !== undefined && sessionKeyOf(restoringSession) !== metadata.session) {
        throw new IntegrityError({
          message: "checkpoint belongs to another session",
          context: { reason: "foreign_session" },
        });
      }
      const session = metadata.session;
      const generation = sweepGeneration(store, lockKey(session));
      const entries = streamManifestOnce(store, metadata, { legacy: true });
      // Its scratch holds the send's two parts (of the size the send uses) once the packs are done with.
      const scratchBytes = 2 * Math.min(options.partBytes, options.maxRequestBytes);
      const archive = await assembleRestoreArchive(
        { store, keyPrefix: options.keyPrefix, session },
        entries,
        { limits: options.archiveLimits, spool: spoolOptions, scratchBytes },
      );
      // A restore publishes nothing: the session's latest manifest (and the pass it came from) stays.
      const sha256 = metadata.contentHash.slice("sha256:".length);
      const latest = known.get(session)?.latest ??
        (await latestManifest(store, options.keyPrefix, session)) ?? {
          sha256,
          size: metadata.size,
        };
      const restored = latest.sha256 === sha256 ? latest : { sha256, size: metadata.size };
      remember(session, generation, restored);
      return {
        archive,
        ...(restored.pass
          ? { afterExtract: seedListingCache(restored.pass, options.excludes) }
          : {}),
      };
    },
  };
}

/** The session's previous published manifest, read by a listing delta. */
interface Previous {
  readonly pass: string;
  /**
   * Stops the read of its base begun ahead and removes the copy it made: once the sandbox's pass shows no
   * delta will be asked for, and at the checkpoint's end. Idempotent.
   */
  release(): Promise<void>;
  entries(): AsyncIterable<ManifestEntry>;
  /**
   * The delta over its base that the sandbox's changed records make (each opened afresh for every read),
   * checked; null when a full manifest is due.
   */
  changes(
    removed: () => AsyncIterable<RecordGroup>,
    added: () => AsyncIterable<RecordGroup>,
    listedCount: number,
  ): Promise<ManifestChanges | null>;
  /** The packed contents it names, once a read of its entries reached the end; undefined before. */
  recalled(): ReturnType<typeof createPackedContentsCollector> | undefined;
}

/** A map of contents as the lookup {@link StoredContents} answers. */
function mapContents(contents: ReadonlyMap<string, PackLocation | null>): StoredContents {
  return { size: contents.size, get: (sha256) => contents.get(sha256) };
}

/** The entries (not the removals) of a delta's lines. */
async function* entriesOf(changes: ManifestChanges): AsyncGenerator<ManifestEntry> {
  for await (const { item } of changes.items()) if (item.type !== "removed") yield item;
}

/** A checkpoint that failed on a hash from the sandbox's cache, to be taken once more without it. */
class CacheMissed extends Error {
  constructor(readonly original: unknown) {
    super("a cached hash did not match its file");
  }
}
