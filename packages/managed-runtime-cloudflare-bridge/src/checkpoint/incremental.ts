import { createHash } from "node:crypto";
import { once } from "node:events";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError, SandboxFailedError, type SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import tar from "tar-stream";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { blobKeyOf, manifestKeyOf, sessionKeyOf } from "./blob-keys.js";
import { type DeferredDirectoryMode, extractedDirectoryMode, isDeferredDirectoryMode } from "./directory-modes.js";
import { type ManifestEntry, type ManifestFile, encodeManifest } from "./manifest.js";
import { type ManifestHandleMetadata, createManifestHandle } from "./manifest-handle.js";
import { loadManifest } from "./manifest-store.js";
import { sweepGeneration, withCheckpointLock } from "./session-locks.js";
import { createLimiter } from "./limiter.js";
import { checkLimits, inspectManifest } from "./manifest-checks.js";
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

/** Bytes of the outgoing tar sampled to decide on compression; smaller transfers go uncompressed. */
const COMPRESSION_SAMPLE_BYTES = 1024 * 1024;
/** Compress when the sample shrinks below this fraction of its size. */
const COMPRESSION_WORTH = 0.8;

/** Files up to this size are moved between the store and the driver whole, several at a time. */
const SMALL_BLOB_BYTES = 256 * 1024;
/** Store calls in flight for small blobs. */
const PARALLEL_STORE_CALLS = 8;

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
    const unknown = new Map<string, ManifestFile>();
    for (const file of files) if (!stored.has(file.sha256) && !unknown.has(file.sha256)) unknown.set(file.sha256, file);
    // Several HEADs at a time: after a driver restart every hash is unknown and one round trip each adds up.
    const missing = new Map<string, ManifestFile>();
    const heads = createLimiter(PARALLEL_STORE_CALLS);
    for (const [sha256, file] of unknown) {
      await heads.run(async () => {
        if ((await store.head(blobKeyOf(options.keyPrefix, session, sha256))) === null) missing.set(sha256, file);
      });
    }
    await heads.drain();
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

  const storeSmallBlob = async (session: string, expected: ManifestFile, bytes: Buffer): Promise<void> => {
    if (createHash("sha256").update(bytes).digest("hex") !== expected.sha256 || bytes.byteLength !== expected.size) {
      throw new SandboxFailedError({ message: "a workspace file changed while it was checkpointed", context: { path: expected.path.slice(0, 256) } });
    }
    await store.put(blobKeyOf(options.keyPrefix, session, expected.sha256), bytes, { contentType: "application/octet-stream", ifNoneMatch: "*" });
  };

  const transfer = async (sandboxId: string, session: string, missing: Map<string, ManifestFile>, signal?: AbortSignal) => {
    const missingBytes = [...missing.values()].reduce((sum, file) => sum + file.size, 0);
    const byPath = new Map([...missing.values()].map((file) => [file.path, file]));
    const list = new TextEncoder().encode([...byPath.keys()].map((path) => `./${path}\0`).join(""));
    const tarOf = (directory: string) => `cat ${directory}/list-* | tar -cf - -C /workspace --null --no-recursion --hard-dereference -T -`;
    let compress = false;
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
          compress = missingBytes >= COMPRESSION_SAMPLE_BYTES && (await compressionPays(sandboxId, tarOf(directory), signal));
        },
        tarCommand: (directory) => (compress ? `{ ${tarOf(directory)}; echo $? > ${directory}/tar-status; } | gzip -1` : tarOf(directory)),
      });
      const extract = tar.extract();
      const source = Readable.fromWeb(spool.read() as never);
      if (compress) {
        // Decompressed as it streams, never as a whole.
        const gunzip = createGunzip();
        gunzip.on("error", (error) => extract.destroy(error));
        source.pipe(gunzip).pipe(extract);
      } else source.pipe(extract);
      const received = new Set<string>();
      const puts = createLimiter(PARALLEL_STORE_CALLS);
      for await (const entry of extract) {
        const path = entry.header.name.replace(/^\.\//, "");
        const expected = byPath.get(path);
        if (!expected || entry.header.type !== "file") throw new SandboxFailedError({ message: "the sandbox sent an entry that was not asked for", context: { path: path.slice(0, 256) } });
        const size = entry.header.size ?? 0;
        if (size <= SMALL_BLOB_BYTES) {
          // Small blobs are read whole and stored several at a time: a store round trip each would dominate.
          const chunks: Buffer[] = [];
          for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
          const bytes = Buffer.concat(chunks);
          await puts.run(() => storeSmallBlob(session, expected, bytes));
        } else {
          await storeBlob(session, expected, entry as AsyncIterable<Buffer>, size);
        }
        received.add(path);
      }
      await puts.drain();
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

  /**
   * Whether gzip is in the sandbox and shrinks a sample of what is about to be sent (the first
   * {@link COMPRESSION_SAMPLE_BYTES} of the tar) below {@link COMPRESSION_WORTH}; decided per checkpoint.
   */
  const compressionPays = async (sandboxId: string, tarCommand: string, signal?: AbortSignal): Promise<boolean> => {
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    const output = await files.run(`command -v gzip >/dev/null 2>&1 || { echo none; exit 0; }; ${tarCommand} 2>/dev/null | head -c ${COMPRESSION_SAMPLE_BYTES} | gzip -1 | wc -c`, signal);
    const compressed = Number.parseInt(output.trim(), 10);
    return Number.isSafeInteger(compressed) && compressed < COMPRESSION_SAMPLE_BYTES * COMPRESSION_WORTH;
  };

  return {
    async checkpoint(input: { readonly sandboxId: string; readonly sessionId: string; readonly signal?: AbortSignal }): Promise<SandboxCheckpointHandle> {
      const session = sessionKeyOf(input.sessionId);
      return withCheckpointLock(store, lockKey(session), () => capture(input, session));
    },
    /**
     * Writes the tar a restore sends into `spool`, from the manifest and the session's blobs; every blob is
     * hashed on its way and a mismatch is `integrity_failed` before any byte leaves the driver. Returns the
     * directory modes to apply once the tar is extracted (see {@link extractedDirectoryMode}).
     */
    async assemble(metadata: ManifestHandleMetadata, spool: Spool, restoringSession: string | undefined, signal?: AbortSignal): Promise<DeferredDirectoryMode[]> {
      if (restoringSession !== undefined && sessionKeyOf(restoringSession) !== metadata.session) {
        throw new IntegrityError({ message: "checkpoint belongs to another session", context: { reason: "foreign_session" } });
      }
      const manifest = await loadManifest(store, metadata);
      checkLimits(manifest.entries, options.archiveLimits);
      const pack = tar.pack();
      const appended = spool.append(Readable.toWeb(Readable.from(pack)) as ReadableStream<Uint8Array>, signal);
      appended.catch(() => undefined);
      try {
        const ahead = prefetchSmallBlobs(metadata.session, manifest.entries);
        for (const [index, entry] of manifest.entries.entries()) await packEntry(pack, metadata.session, entry, ahead(index));
        pack.finalize();
      } catch (error) {
        pack.destroy();
        throw error;
      }
      await appended;
      remember(metadata.session, manifest.entries, sweepGeneration(store, lockKey(metadata.session)));
      return manifest.entries.filter((entry) => entry.type === "directory" && isDeferredDirectoryMode(entry.mode)).map(({ path, mode }) => ({ path, mode }));
    },
  };

  /**
   * Keeps the reads of the next small blobs in flight while earlier entries are packed; returns, per entry
   * index, the verified bytes of a small file (or null for anything else).
   */
  function prefetchSmallBlobs(session: string, entries: readonly ManifestEntry[]) {
    const pending = new Map<number, Promise<Buffer>>();
    let next = 0;
    const fill = (from: number) => {
      next = Math.max(next, from);
      while (next < entries.length && pending.size < PARALLEL_STORE_CALLS * 2) {
        const entry = entries[next] as ManifestEntry;
        if (entry.type === "file" && entry.size <= SMALL_BLOB_BYTES) {
          const read = readSmallBlob(session, entry);
          read.catch(() => undefined);
          pending.set(next, read);
        }
        next += 1;
      }
    };
    return (index: number): Promise<Buffer> | null => {
      const read = pending.get(index) ?? null;
      pending.delete(index);
      fill(index + 1);
      return read;
    };
  }

  async function readSmallBlob(session: string, entry: ManifestFile): Promise<Buffer> {
    const object = await openBlob(session, entry);
    const bytes = Buffer.from(await new Response(object.stream()).arrayBuffer());
    if (createHash("sha256").update(bytes).digest("hex") !== entry.sha256) {
      throw new IntegrityError({ message: "a checkpoint blob's hash does not match the manifest", context: { path: entry.path.slice(0, 256) } });
    }
    return bytes;
  }

  async function openBlob(session: string, entry: ManifestFile) {
    const object = await store.get(blobKeyOf(options.keyPrefix, session, entry.sha256));
    if (!object) throw new NotFoundError({ message: "a checkpoint blob is missing from the store", context: { path: entry.path.slice(0, 256) } });
    if (object.size !== entry.size) {
      await object.stream().cancel().catch(() => undefined);
      throw new IntegrityError({ message: "a checkpoint blob's size does not match the manifest", context: { path: entry.path.slice(0, 256) } });
    }
    return object;
  }

  async function packEntry(pack: tar.Pack, session: string, entry: ManifestEntry, prefetched: Promise<Buffer> | null): Promise<void> {
    const mtime = new Date(entry.mtime * 1000);
    if (entry.type === "directory") return void pack.entry({ name: `./${entry.path}/`, type: "directory", mode: extractedDirectoryMode(entry.mode), mtime });
    if (entry.type === "symlink") return void pack.entry({ name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime });
    const header = { name: `./${entry.path}`, type: "file" as const, size: entry.size, mode: entry.mode, mtime };
    if (prefetched) {
      const bytes = await prefetched;
      // Waits for the pack to flush the entry, so entries never pile up ahead of the spool.
      return new Promise<void>((resolve, reject) => pack.entry(header, bytes, (error?: Error | null) => (error ? reject(error) : resolve())));
    }
    const object = await openBlob(session, entry);
    if (!object) throw new NotFoundError({ message: "a checkpoint blob is missing from the store", context: { path: entry.path.slice(0, 256) } });
    if (object.size !== entry.size) {
      await object.stream().cancel().catch(() => undefined);
      throw new IntegrityError({ message: "a checkpoint blob's size does not match the manifest", context: { path: entry.path.slice(0, 256) } });
    }
    const hash = createHash("sha256");
    const sink = pack.entry(header);
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

function isFile(entry: ManifestEntry): entry is ManifestFile {
  return entry.type === "file";
}
