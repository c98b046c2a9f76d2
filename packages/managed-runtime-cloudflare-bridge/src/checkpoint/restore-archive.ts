import { createHash } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { type BlobStore, bodyChunks, readBodyInto } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import {
  type ArchiveLimits,
  END_OF_ARCHIVE_BYTES,
  createHeaderInspection,
  encodeMemberHeader,
  keptMode,
} from "@open-managed-agents/workspace-archive";
import { asCheckpointRefusal, checkpointReadOptions } from "./archive-policy.js";
import { blobKeyOf, packKeyOf } from "./blob-keys.js";
import { type BufferedSpool, createBufferedSpool } from "./buffered-spool.js";
import type { ManifestEntry, ManifestFile, PackRef } from "./manifest.js";
import { PACK_BYTES, SMALL_BLOB_BYTES } from "./pack-writer.js";

/**
 * Largest pack a restore reads (each is read whole into a buffer of its stated size): packs this driver writes
 * stay under PACK_BYTES + SMALL_BLOB_BYTES, so anything far larger is refused before a byte is read.
 */
export const MAX_PACK_READ_BYTES = 64 * 1024 * 1024;
/** Packs held at once (each whole, a few MiB): the least recently used is dropped first. */
const PACKS_HELD = 3;
/** Bytes of one pack slot: packs this driver writes fit one. */
const PACK_SLOT_BYTES = PACK_BYTES + SMALL_BLOB_BYTES;
const BLOCK = 512;
const EMPTY_SHA256 = sha256HexSync("");
const ZEROS = Buffer.alloc(END_OF_ARCHIVE_BYTES);
/** Contents sampled for the compression decision: at most 32 pieces of 32 KiB, the first 64 KiB apart. */
const SAMPLE_PIECES = 32;
const SAMPLE_PIECE_BYTES = 32 * 1024;
const SAMPLE_FIRST_STEP_BYTES = 64 * 1024;

/** Where the archive's contents come from: the store and the session's own key namespace. */
export interface RestoreSource {
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly session: string;
}

/** The tar a restore sends, assembled and checked, in spools to be sent one after the other. */
export interface RestoreArchive {
  /** Files, then symlinks, then folders and the end-of-archive blocks. */
  readonly segments: readonly BufferedSpool[];
  /** Bytes of the whole tar. */
  readonly size: number;
  /** Whether gzip -1 shrank a sample spread over the contents below 80 %. */
  readonly compressible: boolean;
  /**
   * The memory packs were read into, idle once the archive is assembled: the send builds its parts in it
   * rather than beside it, so a restore holds one set of buffers, not the assembly's and the send's.
   */
  readonly scratch: Buffer;
  dispose(): Promise<void>;
}

/** Options of {@link assembleRestoreArchive}. */
export interface AssembleRestoreOptions {
  readonly limits: ArchiveLimits;
  readonly spool: { readonly maxBytes: number; readonly directory?: string };
  /**
   * Bytes of {@link RestoreArchive.scratch} (at least the packs held, {@link PACKS_HELD} slots): two parts of
   * the send that follows, so it needs no buffer of its own.
   */
  readonly scratchBytes?: number;
}

const refused = (entry: ManifestEntry, message: string) =>
  new IntegrityError({ message, context: { path: entry.path.slice(0, 256) } });

/**
 * Assembles the tar of a manifest in one pass over its entries: every entry is held to the restore rules and
 * the archive limits, every content is read from the store and hashed before it is written (a missing object is
 * `not_found`, a changed one `integrity_failed`), files are written in manifest order (a few packs held at a
 * time), symlinks after every file and folders last, so no file is written through a link and a folder's
 * own mode and mtime are applied once everything inside it is there. Nothing reaches a sandbox here.
 */
export async function assembleRestoreArchive(
  source: RestoreSource,
  entries: AsyncIterable<ManifestEntry>,
  options: AssembleRestoreOptions,
): Promise<RestoreArchive> {
  const files = await createBufferedSpool(options.spool);
  const symlinks = await createBufferedSpool(options.spool).catch(async (error: unknown) =>
    Promise.reject(await files.dispose().then(() => error)),
  );
  const folders = await createBufferedSpool(options.spool).catch(async (error: unknown) =>
    Promise.reject(await Promise.all([files.dispose(), symlinks.dispose()]).then(() => error)),
  );
  const segments = [files, symlinks, folders];
  const dispose = async () =>
    void (await Promise.all(segments.map((segment) => segment.dispose())));
  try {
    const inspection = createHeaderInspection(checkpointReadOptions(options.limits));
    const packs = createPackCache(
      Math.max(PACKS_HELD * PACK_SLOT_BYTES, options.scratchBytes ?? 0),
    );
    const sample = createSample();
    // Each header is copied into its spool before the next is encoded: one buffer serves them all.
    const scratch = Buffer.alloc(BLOCK);
    try {
      for await (const entry of entries) {
        const name = entry.type === "directory" ? `./${entry.path}/` : `./${entry.path}`;
        const linkname = entry.type === "symlink" ? entry.target : null;
        inspection.admit({
          name,
          type: entry.type,
          mode: entry.mode,
          mtime: entry.mtime,
          size: entry.type === "file" ? entry.size : 0,
          linkname,
        });
        // The manifest's schema holds modes to the policy already; what reaches tar is held to it again here.
        const header = encodeMemberHeader(
          {
            name,
            type: entry.type,
            mode: keptMode(entry.mode),
            mtime: entry.mtime,
            size: entry.type === "file" ? entry.size : 0,
            linkname,
            uid: 0,
            gid: 0,
            uname: "",
            gname: "",
          },
          scratch,
        );
        if (entry.type === "directory") await folders.write(header);
        else if (entry.type === "symlink") await symlinks.write(header);
        else {
          await files.write(header);
          await writeContent(source, entry, files, packs, sample);
        }
      }
      await inspection.finish();
    } catch (error) {
      throw asCheckpointRefusal(error);
    }
    await folders.write(ZEROS);
    let size = 0;
    for (const segment of segments) size += await segment.finish();
    return {
      segments,
      size,
      compressible: sample.compressible(),
      scratch: packs.memory(),
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Writes one file's content and its padding, hashed on the way. */
async function writeContent(
  source: RestoreSource,
  file: ManifestFile,
  out: BufferedSpool,
  packs: ReturnType<typeof createPackCache>,
  sample: ReturnType<typeof createSample>,
): Promise<void> {
  if (file.size === 0) {
    if (file.sha256 !== EMPTY_SHA256)
      throw refused(file, "a checkpoint blob's hash does not match the manifest");
    return;
  }
  const { location } = file;
  if (location) {
    const pack = await packs.get(location.pack, (into) =>
      readPack(source, location.pack, file, into),
    );
    if (location.offset + file.size > pack.byteLength)
      throw refused(file, "a checkpoint manifest places a file outside its pack");
    const content = pack.subarray(location.offset, location.offset + file.size);
    if (sha256HexSync(content) !== file.sha256)
      throw refused(file, "a checkpoint blob's hash does not match the manifest");
    sample.add(content);
    await out.write(content);
  } else {
    const object = await open(
      source,
      blobKeyOf(source.keyPrefix, source.session, file.sha256),
      file.size,
      file,
    );
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of bodyChunks(object.stream())) {
      size += chunk.byteLength;
      if (size > file.size)
        throw refused(file, "a checkpoint blob's size does not match the manifest");
      hash.update(chunk);
      sample.add(chunk);
      await out.write(chunk);
    }
    if (size !== file.size || hash.digest("hex") !== file.sha256)
      throw refused(file, "a checkpoint blob's hash does not match the manifest");
  }
  const padding = (BLOCK - (file.size % BLOCK)) % BLOCK;
  if (padding > 0) await out.write(ZEROS.subarray(0, padding));
}

async function open(source: RestoreSource, key: string, size: number, entry: ManifestEntry) {
  const object = await source.store.get(key);
  if (!object)
    throw new NotFoundError({
      message: "a checkpoint blob is missing from the store",
      context: { path: entry.path.slice(0, 256) },
    });
  if (object.size !== size) {
    await object
      .stream()
      .cancel()
      .catch(() => undefined);
    throw refused(entry, "a checkpoint blob's size does not match the manifest");
  }
  return object;
}

/**
 * A whole pack, of the size the manifest states, read into one buffer (straight from the store when its body
 * is a byte stream). Its contents are each hashed as they are written; the pack's own name needs no check
 * of its own.
 */
async function readPack(
  source: RestoreSource,
  ref: PackRef,
  first: ManifestFile,
  into: (size: number) => Uint8Array,
): Promise<Uint8Array> {
  if (ref.size > MAX_PACK_READ_BYTES)
    throw refused(first, "a checkpoint pack is larger than any pack a checkpoint writes");
  const object = await open(
    source,
    packKeyOf(source.keyPrefix, source.session, ref.sha256),
    ref.size,
    first,
  );
  const bytes = await readBodyInto(object.stream(), into(ref.size));
  if (!bytes) throw refused(first, "a checkpoint blob's size does not match the manifest");
  return bytes;
}

/**
 * The last {@link PACKS_HELD} packs read, least recently used dropped first, each read into a slot of one
 * scratch memory (a larger pack, which this driver never writes, into a buffer of its own): a restore of any
 * size reads its packs into the one scratch. A read in BYOB mode hands the whole memory back in a new
 * ArrayBuffer (the one read into is detached), so packs are held as slots and viewed in the memory as it is now.
 */
function createPackCache(bytes: number) {
  let memory = new ArrayBuffer(bytes);
  const slots = Math.floor(bytes / PACK_SLOT_BYTES);
  const held = new Map<string, { readonly slot: number; readonly size: number } | Buffer>();
  const free = Array.from({ length: slots }, (_, slot) => slot);
  const view = (pack: { readonly slot: number; readonly size: number } | Buffer) =>
    Buffer.isBuffer(pack) ? pack : Buffer.from(memory, pack.slot * PACK_SLOT_BYTES, pack.size);
  return {
    /** The scratch memory as it is now. */
    memory: () => Buffer.from(memory),
    /** The pack `ref`, read by `read` into the memory it is given (of the size asked for) unless held. */
    async get(
      ref: PackRef,
      read: (into: (size: number) => Uint8Array) => Promise<Uint8Array>,
    ): Promise<Buffer> {
      let pack = held.get(ref.sha256);
      if (pack) held.delete(ref.sha256);
      else {
        // The least recently used pack goes before the read, so its slot can take the new one.
        if (held.size >= PACKS_HELD) {
          const [oldest, dropped] = held.entries().next().value as [
            string,
            { readonly slot: number } | Buffer,
          ];
          held.delete(oldest);
          if (!Buffer.isBuffer(dropped)) free.push(dropped.slot);
        }
        const slot = ref.size <= PACK_SLOT_BYTES ? free.pop() : undefined;
        const bytes = await read((size) =>
          slot === undefined
            ? Buffer.allocUnsafeSlow(size)
            : new Uint8Array(memory, slot * PACK_SLOT_BYTES, size),
        );
        if (slot === undefined)
          pack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        else {
          memory = bytes.buffer as ArrayBuffer;
          pack = { slot, size: bytes.byteLength };
        }
      }
      held.set(ref.sha256, pack);
      return view(pack);
    },
  };
}

/**
 * Pieces of the contents at even steps, to tell whether compressing the transfer pays, whatever the total
 * (unknown while the archive is assembled): up to 32 pieces of 32 KiB; when a 33rd comes, every other piece
 * is dropped and the step doubles, so the pieces stay spread over everything seen.
 */
function createSample() {
  let pieces: Array<{ readonly at: number; readonly bytes: Buffer }> = [];
  let step = SAMPLE_FIRST_STEP_BYTES;
  let seen = 0;
  let next = 0;
  return {
    add(bytes: Uint8Array) {
      const end = seen + bytes.byteLength;
      while (next < end) {
        const from = Math.max(0, next - seen);
        pieces.push({
          at: seen + from,
          bytes: Buffer.from(
            bytes.subarray(from, Math.min(bytes.byteLength, from + SAMPLE_PIECE_BYTES)),
          ),
        });
        if (pieces.length > SAMPLE_PIECES) {
          pieces = pieces.filter((_, index) => index % 2 === 0);
          step *= 2;
          next = (pieces.at(-1) as { at: number }).at + step;
        } else next = seen + from + step;
      }
      seen = end;
    },
    compressible() {
      if (pieces.length === 0) return false;
      const whole = Buffer.concat(pieces.map((piece) => piece.bytes));
      return deflateRawSync(whole, { level: 1 }).byteLength < whole.byteLength * 0.8;
    },
  };
}
