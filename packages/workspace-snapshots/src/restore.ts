import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type BlobStore, bodyChunks, readBodyInto } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import {
  END_OF_ARCHIVE_BYTES,
  type MemberHeader,
  encodeMemberHeader,
  padToBlock,
} from "@open-managed-agents/workspace-archive";
import { CAPTURE, PACK_BYTES, PACK_CONTENT_BYTES } from "./capture.js";
import { type Compression, pickCodec, transcode } from "./codec.js";
import type { SessionKeys } from "./keys.js";
import type { FileEntry } from "./objects.js";
import { sendParts } from "./parts.js";
import { type Progress, type RunInput, createProgress } from "./progress.js";
import type { SnapshotSandbox } from "./sandbox-port.js";
import HASH_FILES_SCRIPT from "./scripts/hash-files.sh";
import LISTING_CACHE_SCRIPT from "./scripts/listing-cache.sh";
import RECEIVE_SCRIPT from "./scripts/receive.sh";
import RESTORE_SCRIPT from "./scripts/restore.sh";
import { createTreeStore } from "./stored-objects.js";
import { type TemporaryFile, createTemporaryFile } from "./temporary-file.js";

const RESTORE = [RECEIVE_SCRIPT, HASH_FILES_SCRIPT, LISTING_CACHE_SCRIPT, RESTORE_SCRIPT].join(
  "\n",
);
/** Packs held in memory at once while a restore is assembled. */
const CACHED_PACKS = 4;
const EMPTY_SHA256 = createHash("sha256").digest("hex");
/** Padding after a member's content, never written to: appending copies it. */
const ZERO_BLOCK = Buffer.alloc(512);
/** Largest pack read: what capture writes, with room to spare. */
const MAX_PACK_READ = PACK_BYTES + PACK_CONTENT_BYTES;

/** Where a restore goes in the sandbox, and how its bytes travel. */
export interface RestoreSettings {
  readonly workspace: string;
  readonly cacheDirectory: string;
  readonly scratchDirectory: string;
  readonly prune: readonly string[];
  readonly partBytes: number;
  readonly spoolDirectory: string;
  readonly compression: Compression;
}

/** A snapshot read, checked and assembled on this machine, ready to send to any sandbox. */
export interface PreparedRestore {
  readonly id: string;
  /** Bytes of the archive sent (before compression). */
  readonly size: number;
  readonly entries: number;
  /**
   * Restores into the sandbox's workspace and proves it there; may be called for several sandboxes. Progress
   * goes to `onProgress`, else to the one the restore was prepared with.
   */
  send(sandbox: SnapshotSandbox, options?: RunInput): Promise<void>;
  /** Releases the local copy. Idempotent. */
  dispose(): Promise<void>;
}

/** Every member is root's, by number only. */
const ROOT_OWNED = { uid: 0, gid: 0, uname: "", gname: "" } as const;

/** A member's headers, its exact mtime carried in a pax record. */
function memberHeader(
  path: string,
  type: MemberHeader["type"],
  stat: { readonly mode: number; readonly mtime: string; readonly size?: number },
  linkname: string | null = null,
): Buffer {
  return encodeMemberHeader({
    name: type === "directory" ? `./${path}/` : `./${path}`,
    type,
    mode: stat.mode,
    mtime: Number.parseInt(stat.mtime, 10),
    exactMtime: stat.mtime,
    size: stat.size ?? 0,
    linkname,
    ...ROOT_OWNED,
  });
}

/** A body left unread. */
const discard = (body: ReadableStream) => body.cancel().catch(() => undefined);

/**
 * Reads snapshot `id` whole (every tree, pack and blob checked against its hash) into a local archive and the
 * listing the sandbox must match, so a tampered object is refused before anything reaches a sandbox.
 */
export async function prepareRestore(
  settings: RestoreSettings,
  input: RunInput & { readonly store: BlobStore; readonly keys: SessionKeys; readonly id: string },
): Promise<PreparedRestore> {
  const { store, keys, signal } = input;
  const trees = createTreeStore(store, keys);
  const progress = createProgress(input.onProgress);
  progress.step("assemble");
  const snapshot = await trees.snapshot(input.id);
  progress.step("assemble", { totalEntries: snapshot.entries });
  // Nameless local files: a process killed mid-restore leaves nothing in the spool folder.
  const archive = await createTemporaryFile(settings.spoolDirectory);
  const listing = await createTemporaryFile(settings.spoolDirectory);
  const dispose = async () => {
    await archive.close();
    await listing.close();
  };
  try {
    let entries = 0;
    const packs = new Map<string, { readonly buffer: Buffer; readonly bytes: Buffer }>();
    /**
     * Pack `id`, read straight from its byte stream into a buffer of MAX_PACK_READ (in BYOB mode the memory
     * comes back in a new ArrayBuffer); a larger pack is refused.
     */
    const packOf = async (id: string) => {
      const cached = packs.get(id);
      if (cached) return cached.bytes;
      const key = keys.object("packs", id);
      const object = await store.get(key);
      if (!object)
        throw new NotFoundError({
          message: "snapshot pack is missing from the store",
          context: { key },
        });
      const refused = () =>
        new IntegrityError({
          message: "snapshot pack is larger than any this format writes, or not the size stored",
          context: { key },
        });
      if (object.size > MAX_PACK_READ) {
        await discard(object.stream());
        throw refused();
      }
      // The oldest pack's buffer is read into again: a restore allocates CACHED_PACKS buffers at most.
      let buffer: Buffer | undefined;
      if (packs.size >= CACHED_PACKS) {
        const oldest = packs.keys().next().value as string;
        buffer = packs.get(oldest)?.buffer;
        packs.delete(oldest);
      }
      buffer ??= Buffer.allocUnsafe(MAX_PACK_READ);
      const read = await readBodyInto(object.stream(), buffer.subarray(0, object.size));
      if (read === null) throw refused();
      const whole = Buffer.from(read.buffer, read.byteOffset, MAX_PACK_READ);
      const bytes = whole.subarray(0, object.size);
      packs.set(id, { buffer: whole, bytes });
      return bytes;
    };
    const refuse = (path: string, what: string) =>
      new IntegrityError({
        message: `snapshot content of ${JSON.stringify(path.slice(0, 256))} ${what}`,
        context: { entry: path.slice(0, 256) },
      });
    /** A file's content as stored: a slice of its pack, or its blob read through one buffer. */
    const contentOf = async function* (path: string, entry: FileEntry, hash: string) {
      if (entry.pack !== undefined && entry.offset !== undefined) {
        const pack = await packOf(entry.pack);
        if (entry.offset + entry.size > pack.length) throw refuse(path, "lies beyond its pack");
        yield pack.subarray(entry.offset, entry.offset + entry.size);
        return;
      }
      const object = await store.get(keys.object("blobs", hash));
      if (!object)
        throw new NotFoundError({
          message: "a snapshot blob is missing from the store",
          context: { entry: path.slice(0, 256) },
        });
      if (object.size !== entry.size) {
        await discard(object.stream());
        throw refuse(path, "has the wrong size");
      }
      yield* bodyChunks(object.stream());
    };
    // Each piece is appended (copied or written out) before the next is read.
    const body = async (path: string, entry: FileEntry) => {
      if (entry.size === 0 || entry.hash === undefined) return;
      const hash = createHash("sha256");
      for await (const piece of contentOf(path, entry, entry.hash)) {
        hash.update(piece);
        await archive.append(piece);
      }
      if (hash.digest("hex") !== entry.hash) throw refuse(path, "does not match its hash");
      await archive.append(ZERO_BLOCK.subarray(0, padToBlock(entry.size) - entry.size));
    };
    const fileRecords = (path: string, entry: FileEntry, links: number) =>
      `${path}//ef ${entry.mode.toString(8)} ${entry.size} ${entry.mtime}0 ${links} \0${path}//h${entry.hash ?? EMPTY_SHA256}\0`;
    /** Hard links by inode: the first path holds the content, the others are tar links to it. */
    const groups = new Map<string, { first: string; entry: FileEntry; paths: string[] }>();

    const walk = async (dir: string, tree: string): Promise<void> => {
      for await (const entry of trees.entries(tree)) {
        signal?.throwIfAborted();
        const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
        entries += 1;
        progress.add(1);
        const link = entry.type === "file" ? entry.link : undefined;
        const group = link === undefined ? undefined : groups.get(link);
        if (entry.type === "dir") {
          await archive.append(memberHeader(path, "directory", entry));
          await listing.append(`${path}//ed ${entry.mode.toString(8)} 0 ${entry.mtime}0 1 \0`);
          await walk(path, entry.tree);
        } else if (entry.type === "symlink") {
          const stat = { mode: 0o777, mtime: entry.mtime };
          await archive.append(memberHeader(path, "symlink", stat, entry.target));
          await listing.append(`${path}//el - 0 ${entry.mtime}0 1 ${entry.target}\0`);
        } else if (group) {
          if (group.entry.hash !== entry.hash || group.entry.size !== entry.size)
            throw refuse(path, "differs from the file it is a link of");
          group.paths.push(path);
          const stat = { mode: entry.mode, mtime: entry.mtime };
          await archive.append(memberHeader(path, "link", stat, `./${group.first}`));
        } else {
          await archive.append(memberHeader(path, "file", entry));
          await body(path, entry);
          if (link !== undefined) groups.set(link, { first: path, entry, paths: [path] });
          else await listing.append(fileRecords(path, entry, 1));
        }
      }
    };
    await walk("", snapshot.tree);
    // The closures returned below share this scope: cached packs would stay alive through every send.
    packs.clear();
    for (const group of groups.values()) {
      for (const path of group.paths)
        await listing.append(fileRecords(path, group.entry, group.paths.length));
    }
    await archive.append(Buffer.alloc(END_OF_ARCHIVE_BYTES));
    const spooled = { id: input.id, archive, listing, entries };
    return {
      id: input.id,
      size: archive.size,
      entries,
      send: (sandbox, options = {}) =>
        sendRestore(settings, spooled, sandbox, {
          signal: options.signal,
          progress: createProgress(options.onProgress ?? input.onProgress, {
            step: "send",
            entries,
            totalEntries: entries,
          }),
        }),
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function sendRestore(
  settings: RestoreSettings,
  spooled: {
    readonly id: string;
    readonly archive: TemporaryFile;
    readonly listing: TemporaryFile;
  },
  sandbox: SnapshotSandbox,
  options: { readonly signal?: AbortSignal; readonly progress: Progress },
): Promise<void> {
  const { workspace, cacheDirectory, scratchDirectory, prune, partBytes } = settings;
  const { progress, signal } = options;
  progress.step("send", { totalBytes: spooled.archive.size });
  const scratch = `${scratchDirectory}/.oma-restore-${randomUUID()}`;
  const made = await sandbox.run("restore.sh", RESTORE, ["prepare", scratch], signal);
  if (made.exitCode !== 0)
    throw new SandboxFailedError({
      message: `could not prepare the restore: ${made.stderr.slice(0, 300)}`,
    });
  const codec = await pickCodec(settings.compression, made.stdout.split("\n").includes("zstd yes"));
  // The proven tree becomes the listing cache of the snapshot, so the next checkpoint hashes only changes.
  const pass = randomBytes(8).toString("hex");
  const running = sandbox.run(
    "restore.sh",
    RESTORE,
    ["restore", workspace, scratch, codec, cacheDirectory, pass, spooled.id, ...prune],
    signal,
  );
  try {
    const encoded = transcode(
      counted(spooled.archive.read({ reuse: true }), progress),
      codec,
      "encode",
    );
    await sendParts(sandbox, `${scratch}/archive`, encoded, partBytes, signal);
    const listed = spooled.listing.read({ reuse: true });
    await sendParts(sandbox, `${scratch}/listing`, listed, partBytes, signal);
    progress.step("verify");
  } catch (error) {
    // The script stops once its folder is gone.
    await sandbox.run("capture.sh", CAPTURE, ["clean", scratch]).catch(() => undefined);
    await running.catch(() => undefined);
    throw error;
  }
  const result = await running;
  if (result.exitCode === 3)
    throw new IntegrityError({
      message: "a part of the restore did not match its hash in the sandbox",
      context: { reason: "part_mismatch" },
    });
  if (result.exitCode === 4) {
    const record = result.stdout.split("\n")[0]?.replace(/^\t/, "") ?? "";
    const entry = record.slice(0, Math.max(0, record.indexOf("//"))).slice(0, 256);
    throw new IntegrityError({
      message: `the restored workspace differs from the snapshot at ${JSON.stringify(entry)}`,
      context: { reason: "tree_mismatch", entry },
    });
  }
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `the restore failed in the sandbox (exit ${result.exitCode}): ${result.stderr.slice(0, 500)}`,
    });
  }
  progress.finish();
}

/** `source`'s pieces, counted as bytes sent as they pass. */
async function* counted(
  source: AsyncIterable<Uint8Array>,
  progress: Progress,
): AsyncGenerator<Uint8Array> {
  for await (const piece of source) {
    progress.add(0, piece.length);
    yield piece;
  }
}
