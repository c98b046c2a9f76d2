import { createHash } from "node:crypto";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import { once } from "node:events";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import type tar from "tar-stream";
import { blobKeyOf, packKeyOf } from "./blob-keys.js";
import { type DeferredDirectoryMode, extractedDirectoryMode, isDeferredDirectoryMode } from "./directory-modes.js";
import type { ManifestEntry, ManifestFile, PackRef } from "./manifest.js";
import { SMALL_BLOB_BYTES } from "./pack-writer.js";
import { type StoredContents, createStoredContentsBuilder } from "./stored-contents.js";

/** Store reads in flight for small blobs. */
const PARALLEL_BLOB_READS = 16;
/** Packs held at once (each whole, at most a few MiB): the least recently used is dropped first. */
const PACKS_HELD = 4;
const EMPTY_SHA256 = sha256HexSync("");
/**
 * Largest pack a restore reads (each is read whole into a buffer of its stated size): packs this driver writes
 * stay under PACK_BYTES + SMALL_BLOB_BYTES, so anything far larger is refused before a byte is read.
 */
export const MAX_PACK_READ_BYTES = 64 * 1024 * 1024;

/** Where assembly reads from: the store and the session's own key namespace. */
export interface AssemblySource {
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly session: string;
}

/** What an assembly learned on the way: directories whose mode waits for extraction, and the stored contents. */
export interface Assembled {
  readonly deferred: DeferredDirectoryMode[];
  readonly stored: StoredContents;
}

const refused = (entry: ManifestEntry, message: string) => new IntegrityError({ message, context: { path: entry.path.slice(0, 256) } });

/**
 * Writes the tar of a manifest into `pack`, reading the entries in passes (never all at once): folders
 * first, then files (own blobs, then packed contents, a few packs held at a time), then symlinks, so no file
 * is written through a link. Every content is hashed before it is written; a mismatch is `integrity_failed`.
 */
export async function assembleTar(source: AssemblySource, entries: () => AsyncIterable<ManifestEntry>, pack: tar.Pack): Promise<Assembled> {
  const deferred: DeferredDirectoryMode[] = [];
  const stored = createStoredContentsBuilder();
  for await (const entry of entries()) {
    if (entry.type !== "directory") continue;
    writeHeader(pack, entry);
    if (isDeferredDirectoryMode(entry.mode)) deferred.push({ path: entry.path, mode: entry.mode });
  }
  // Own blobs: small ones read a window ahead, large ones streamed in turn.
  const window: Array<{ readonly file: ManifestFile; readonly bytes: Promise<Buffer> | null }> = [];
  const flush = async () => {
    const { file, bytes } = window.shift() as (typeof window)[number];
    if (bytes) await writeFile(pack, file, await bytes);
    else await streamBlob(source, file, pack);
  };
  for await (const file of filesOf(entries())) {
    if (file.location) continue;
    if (file.size === 0) {
      if (file.sha256 !== EMPTY_SHA256) throw refused(file, "a checkpoint blob's hash does not match the manifest");
      await writeFile(pack, file, Buffer.alloc(0));
      continue;
    }
    stored.add(file.sha256, null);
    const bytes = file.size <= SMALL_BLOB_BYTES ? readBlob(source, file) : null;
    bytes?.catch(() => undefined);
    window.push({ file, bytes });
    if (window.length >= PARALLEL_BLOB_READS) await flush();
  }
  while (window.length > 0) await flush();
  const packs = new Map<string, Promise<Buffer>>();
  for await (const file of filesOf(entries())) {
    const { location } = file;
    if (!location) continue;
    stored.add(file.sha256, location);
    let bytes = packs.get(location.pack.sha256);
    if (bytes) packs.delete(location.pack.sha256);
    else bytes = readPack(source, location.pack, file);
    packs.set(location.pack.sha256, bytes);
    if (packs.size > PACKS_HELD) packs.delete(packs.keys().next().value as string);
    const content = (await bytes).subarray(location.offset, location.offset + file.size);
    if (sha256HexSync(content) !== file.sha256) throw refused(file, "a checkpoint blob's hash does not match the manifest");
    await writeFile(pack, file, content);
  }
  for await (const entry of entries()) if (entry.type === "symlink") writeHeader(pack, entry);
  return { deferred, stored: stored.build() };
}

async function* filesOf(entries: AsyncIterable<ManifestEntry>): AsyncGenerator<ManifestFile> {
  for await (const entry of entries) if (entry.type === "file") yield entry;
}

function writeHeader(pack: tar.Pack, entry: Exclude<ManifestEntry, ManifestFile>): void {
  const mtime = new Date(entry.mtime * 1000);
  if (entry.type === "directory") pack.entry({ name: `./${entry.path}/`, type: "directory", mode: extractedDirectoryMode(entry.mode), mtime });
  else pack.entry({ name: `./${entry.path}`, type: "symlink", linkname: entry.target, mode: entry.mode, mtime });
}

/** Waits for the tar to flush the entry, so entries never pile up ahead of the spool. */
function writeFile(pack: tar.Pack, file: ManifestFile, bytes: Buffer): Promise<void> {
  const header = { name: `./${file.path}`, type: "file" as const, size: file.size, mode: file.mode, mtime: new Date(file.mtime * 1000) };
  return new Promise<void>((resolve, reject) => pack.entry(header, bytes, (error?: Error | null) => (error ? reject(error) : resolve())));
}

async function open(source: AssemblySource, key: string, size: number, entry: ManifestEntry) {
  const object = await source.store.get(key);
  if (!object) throw new NotFoundError({ message: "a checkpoint blob is missing from the store", context: { path: entry.path.slice(0, 256) } });
  if (object.size !== size) {
    await object.stream().cancel().catch(() => undefined);
    throw refused(entry, "a checkpoint blob's size does not match the manifest");
  }
  return object;
}

async function readWhole(source: AssemblySource, key: string, size: number, sha256: string, entry: ManifestEntry): Promise<Buffer> {
  const object = await open(source, key, size, entry);
  // Copied into one buffer of the known size as chunks arrive, so each chunk is let go at once.
  const bytes = Buffer.allocUnsafeSlow(size);
  let filled = 0;
  for await (const chunk of object.stream() as unknown as AsyncIterable<Uint8Array>) {
    if (filled + chunk.byteLength > size) throw refused(entry, "a checkpoint blob's size does not match the manifest");
    bytes.set(chunk, filled);
    filled += chunk.byteLength;
  }
  if (filled !== size || sha256HexSync(bytes) !== sha256) throw refused(entry, "a checkpoint blob's hash does not match the manifest");
  return bytes;
}

const readBlob = (source: AssemblySource, file: ManifestFile) => readWhole(source, blobKeyOf(source.keyPrefix, source.session, file.sha256), file.size, file.sha256, file);

/** A whole pack, its hash checked (each content is checked again as it is written). */
const readPack = async (source: AssemblySource, ref: PackRef, first: ManifestFile) => {
  if (ref.size > MAX_PACK_READ_BYTES) throw refused(first, "a checkpoint pack is larger than any pack a checkpoint writes");
  return readWhole(source, packKeyOf(source.keyPrefix, source.session, ref.sha256), ref.size, ref.sha256, first);
};

async function streamBlob(source: AssemblySource, file: ManifestFile, pack: tar.Pack): Promise<void> {
  const object = await open(source, blobKeyOf(source.keyPrefix, source.session, file.sha256), file.size, file);
  const hash = createHash("sha256");
  const sink = pack.entry({ name: `./${file.path}`, type: "file", size: file.size, mode: file.mode, mtime: new Date(file.mtime * 1000) });
  for await (const chunk of object.stream() as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    if (!sink.write(chunk)) await once(sink, "drain");
  }
  if (hash.digest("hex") !== file.sha256) throw refused(file, "a checkpoint blob's hash does not match the manifest");
  sink.end(undefined);
}
