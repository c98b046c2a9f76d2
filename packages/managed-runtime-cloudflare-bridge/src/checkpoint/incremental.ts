import { createHash } from "node:crypto";
import { once } from "node:events";
import { Readable } from "node:stream";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { ArchiveRejectedError, IntegrityError, LimitExceededError, NotFoundError, SandboxFailedError, type SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import tar from "tar-stream";
import type { BridgeClient } from "../wire/bridge-client.js";
import { blobKeyOf, manifestKeyOf, sessionKeyOf } from "./blob-keys.js";
import { type ManifestEntry, type ManifestFile, encodeManifest, sortEntries } from "./manifest.js";
import { type ManifestHandleMetadata, createManifestHandle } from "./manifest-handle.js";
import { loadManifest } from "./manifest-store.js";
import { sweepGeneration, withCheckpointLock } from "./session-locks.js";
import { inspectCheckpointArchive } from "./archive-policy.js";
import { fetchTarInParts } from "./sandbox-parts.js";
import { readSandboxManifest } from "./sandbox-manifest.js";
import { type Spool, createSpool } from "./spool.js";

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
  readonly spoolDirectory?: string;
}

/** Sessions whose stored hashes are remembered between checkpoints; older ones are forgotten first. */
const KNOWN_SESSIONS = 64;

/**
 * Incremental checkpoints: a manifest computed in the sandbox plus content blobs stored once by hash under
 * the session's own prefix. Only content the store lacks crosses the bridge, as one tar of just those files
 * fetched in parts; the manifest is stored last, so an interrupted checkpoint publishes nothing.
 */
export function createIncrementalCheckpoints(options: IncrementalCheckpointOptions) {
  const { client, store } = options;
  // Hashes known to be stored per session (from the last checkpoint or restore): the previous checkpoint of
  // this workspace. Anything else is checked with a HEAD before it is sent.
  // A sweep since then may have collected them, so they count only within the same sweep generation.
  const known = new Map<string, { readonly generation: number; readonly hashes: Set<string> }>();
  const remember = (session: string, entries: readonly ManifestEntry[], generation: number) => {
    known.delete(session);
    known.set(session, { generation, hashes: new Set(entries.filter(isFile).map((entry) => entry.sha256)) });
    if (known.size > KNOWN_SESSIONS) known.delete(known.keys().next().value as string);
  };
  const lockKey = (session: string) => `${options.keyPrefix}\0${session}`;

  const missingBlobs = async (session: string, files: readonly ManifestFile[]): Promise<Map<string, ManifestFile>> => {
    const remembered = known.get(session);
    const stored = remembered && remembered.generation === sweepGeneration(store, lockKey(session)) ? remembered.hashes : new Set<string>();
    const missing = new Map<string, ManifestFile>();
    for (const file of files) {
      if (stored.has(file.sha256) || missing.has(file.sha256)) continue;
      if ((await store.head(blobKeyOf(options.keyPrefix, session, file.sha256))) === null) missing.set(file.sha256, file);
    }
    return missing;
  };

  /** Streams one tar entry into the store under its expected hash; a different content is deleted and refused. */
  const storeBlob = async (session: string, expected: ManifestFile, body: AsyncIterable<Buffer>, size: number): Promise<void> => {
    const key = blobKeyOf(options.keyPrefix, session, expected.sha256);
    const hash = createHash("sha256");
    const hashed = Readable.from(body).on("data", (chunk: Buffer) => hash.update(chunk));
    await store.put(key, Readable.toWeb(hashed) as ReadableStream<Uint8Array>, { contentLength: size, contentType: "application/octet-stream", ifNoneMatch: "*" });
    if (hash.digest("hex") !== expected.sha256 || size !== expected.size) {
      await store.delete(key);
      throw new SandboxFailedError({ message: "a workspace file changed while it was checkpointed", context: { path: expected.path.slice(0, 256) } });
    }
  };

  const transfer = async (sandboxId: string, session: string, missing: Map<string, ManifestFile>, signal?: AbortSignal) => {
    const byPath = new Map([...missing.values()].map((file) => [file.path, file]));
    const list = new TextEncoder().encode([...byPath.keys()].map((path) => `./${path}\0`).join(""));
    const spool = await createSpool({ maxBytes: options.maxCheckpointBytes, directory: options.spoolDirectory });
    try {
      await fetchTarInParts({
        client,
        sandboxId,
        spool,
        signal,
        partBytes: options.partBytes,
        maxRequestBytes: options.maxRequestBytes,
        prepare: async (directory) => {
          for (let offset = 0, index = 0; offset < list.byteLength; offset += options.maxRequestBytes, index += 1) {
            const name = `${directory}/list-${String(index).padStart(6, "0")}`;
            await client.writeFile(sandboxId, name, list.subarray(offset, offset + options.maxRequestBytes), signal);
          }
        },
        tarCommand: (directory) => `cat ${directory}/list-* | tar -cf - -C /workspace --null --no-recursion --hard-dereference -T -`,
      });
      const extract = tar.extract();
      Readable.fromWeb(spool.read() as never).pipe(extract);
      const received = new Set<string>();
      for await (const entry of extract) {
        const path = entry.header.name.replace(/^\.\//, "");
        const expected = byPath.get(path);
        if (!expected || entry.header.type !== "file") throw new SandboxFailedError({ message: "the sandbox sent an entry that was not asked for", context: { path: path.slice(0, 256) } });
        await storeBlob(session, expected, entry as AsyncIterable<Buffer>, entry.header.size ?? 0);
        received.add(path);
      }
      if (received.size !== byPath.size) throw new SandboxFailedError({ message: "a workspace file vanished while it was checkpointed", context: { expected: byPath.size, received: received.size } });
    } finally {
      await spool.dispose();
    }
  };

  const capture = async (input: { readonly sandboxId: string; readonly signal?: AbortSignal }, session: string): Promise<SandboxCheckpointHandle> => {
    const generation = sweepGeneration(store, lockKey(session));
    const entries = await readSandboxManifest({ client, sandboxId: input.sandboxId, excludes: options.excludes, maxRequestBytes: options.maxRequestBytes, signal: input.signal });
    checkLimits(entries, options.archiveLimits);
    await inspectManifest(entries, options.archiveLimits);
    const missing = await missingBlobs(session, entries.filter(isFile));
    if (missing.size > 0) await transfer(input.sandboxId, session, missing, input.signal);
    const { bytes, sha256 } = encodeManifest(entries);
    // Published last: before this put no manifest references the new blobs, so nothing is visible.
    await store.put(manifestKeyOf(options.keyPrefix, session, sha256), bytes, { contentType: "application/json", ifNoneMatch: "*", contentLength: bytes.byteLength });
    remember(session, entries, generation);
    return createManifestHandle({ provider: options.provider, sandboxId: input.sandboxId, session, sha256, size: bytes.byteLength });
  };

  return {
    async checkpoint(input: { readonly sandboxId: string; readonly sessionId: string; readonly signal?: AbortSignal }): Promise<SandboxCheckpointHandle> {
      const session = sessionKeyOf(input.sessionId);
      return withCheckpointLock(store, lockKey(session), () => capture(input, session));
    },
    /**
     * Writes the tar a restore sends into `spool`, from the manifest and the session's blobs; every blob is
     * hashed on its way and a mismatch is `integrity_failed` before any byte leaves the driver.
     */
    async assemble(metadata: ManifestHandleMetadata, spool: Spool, restoringSession: string | undefined, signal?: AbortSignal): Promise<void> {
      if (restoringSession !== undefined && sessionKeyOf(restoringSession) !== metadata.session) {
        throw new IntegrityError({ message: "checkpoint belongs to another session", context: { reason: "foreign_session" } });
      }
      const manifest = await loadManifest(store, metadata);
      checkLimits(manifest.entries, options.archiveLimits);
      const pack = tar.pack();
      const appended = spool.append(Readable.toWeb(Readable.from(pack)) as ReadableStream<Uint8Array>, signal);
      appended.catch(() => undefined);
      try {
        for (const entry of manifest.entries) await packEntry(pack, metadata.session, entry);
        pack.finalize();
      } catch (error) {
        pack.destroy();
        throw error;
      }
      await appended;
      remember(metadata.session, manifest.entries, sweepGeneration(store, lockKey(metadata.session)));
    },
  };

  async function packEntry(pack: tar.Pack, session: string, entry: ManifestEntry): Promise<void> {
    const mtime = new Date(entry.mtime * 1000);
    if (entry.type === "directory") return void pack.entry({ name: `./${entry.path}/`, type: "directory", mode: entry.mode, mtime });
    if (entry.type === "symlink") return void pack.entry({ name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime });
    const key = blobKeyOf(options.keyPrefix, session, entry.sha256);
    const object = await store.get(key);
    if (!object) throw new NotFoundError({ message: "a checkpoint blob is missing from the store", context: { path: entry.path.slice(0, 256) } });
    if (object.size !== entry.size) {
      await object.stream().cancel().catch(() => undefined);
      throw new IntegrityError({ message: "a checkpoint blob's size does not match the manifest", context: { path: entry.path.slice(0, 256) } });
    }
    const hash = createHash("sha256");
    const sink = pack.entry({ name: `./${entry.path}`, type: "file", size: entry.size, mode: entry.mode, mtime });
    for await (const chunk of object.stream() as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      if (!sink.write(chunk)) await once(sink, "drain");
    }
    if (hash.digest("hex") !== entry.sha256) {
      throw new IntegrityError({ message: "a checkpoint blob's hash does not match the manifest", context: { path: entry.path.slice(0, 256) } });
    }
    sink.end(undefined);
  }
}

/**
 * Holds a manifest to the rules a restore applies (names, link targets, write-through) by inspecting a
 * tar of its headers alone, so a checkpoint that could not be restored is never published.
 */
async function inspectManifest(entries: readonly ManifestEntry[], limits: ArchiveLimits): Promise<void> {
  const pack = tar.pack();
  const inspected = inspectCheckpointArchive(Readable.from(pack), limits);
  inspected.catch(() => undefined);
  try {
    for (const entry of sortEntries(entries)) {
      const mtime = new Date(entry.mtime * 1000);
      const header: Partial<tar.Header> & { name: string } =
        entry.type === "directory"
          ? { name: `./${entry.path}/`, type: "directory", mode: entry.mode, mtime }
          : entry.type === "symlink"
            ? { name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime }
            : { name: `./${entry.path}`, type: "file", size: 0, mode: entry.mode, mtime };
      // Each header is flushed to the inspector before the next, so headers are never all held at once.
      // A refusal ends the inspector early; the race surfaces it instead of waiting on a flush that never comes.
      const flushed = new Promise<void>((resolve, reject) => pack.entry(header, "", (error?: Error | null) => (error ? reject(error) : resolve())));
      await Promise.race([flushed, inspected.then(() => Promise.reject(new Error("the inspector ended before the last header")))]);
    }
    pack.finalize();
  } catch (error) {
    pack.destroy();
    await inspected;
    throw error;
  }
  await inspected;
}

function isFile(entry: ManifestEntry): entry is ManifestFile {
  return entry.type === "file";
}

/** The archive limits, applied to a manifest before anything is transferred or assembled. */
function checkLimits(entries: readonly ManifestEntry[], limits: ArchiveLimits): void {
  const refuse = (limit: keyof ArchiveLimits, actual: number) =>
    new ArchiveRejectedError({
      message: `checkpoint refused: ${limit} ${limits[limit]} exceeded (${actual})`,
      context: { reason: "limit_exceeded", limit, max: limits[limit], actual },
      cause: new LimitExceededError({ message: `${limit} exceeded`, context: { limit } }),
    });
  if (entries.length > limits.maxEntries) throw refuse("maxEntries", entries.length);
  let total = 0;
  for (const entry of entries) {
    if (entry.type !== "file") continue;
    if (entry.size > limits.maxEntryBytes) throw refuse("maxEntryBytes", entry.size);
    total += entry.size;
    if (total > limits.maxBytes) throw refuse("maxBytes", total);
  }
}
