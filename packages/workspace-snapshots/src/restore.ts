import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type BlobStore, bodyChunks, readBodyInto } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { PACK_BYTES, PACK_CONTENT_BYTES } from "./capture.js";
import { CAPTURE } from "./capture.js";
import { type Compression, pickCodec, transcode } from "./codec.js";
import type { SessionKeys } from "./keys.js";
import type { FileEntry } from "./objects.js";
import { sendParts } from "./parts.js";
import { type Progress, type SnapshotProgress, createProgress } from "./progress.js";
import type { SnapshotSandbox } from "./sandbox-port.js";
import RECEIVE_SCRIPT from "./scripts/receive.sh";
import RESTORE_SCRIPT from "./scripts/restore.sh";
import { createTreeStore } from "./stored-objects.js";
import { END_OF_ARCHIVE, type TarMemberHeader, bodyPadding, encodeHeader } from "./tar-encoder.js";
import { type TemporaryFile, createTemporaryFile } from "./temporary-file.js";

const RESTORE = `${RECEIVE_SCRIPT}\n${RESTORE_SCRIPT}`;
/** Packs held in memory at once while a restore is assembled. */
const CACHED_PACKS = 4;
const EMPTY_SHA256 = createHash("sha256").digest("hex");
/** Largest pack read: what capture writes, with room to spare. */
const MAX_PACK_READ = PACK_BYTES + PACK_CONTENT_BYTES;

/**
 * Pack `key` read into `buffer` (straight from a byte stream, nothing allocated per chunk); a pack larger than
 * the buffer is refused. Answers the buffer to read into next time (in BYOB mode the memory comes back in a new
 * ArrayBuffer) and the pack's bytes in it.
 */
async function readPack(
  store: BlobStore,
  key: string,
  buffer: Buffer,
): Promise<{ readonly buffer: Buffer; readonly bytes: Buffer }> {
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
  if (object.size > buffer.length) {
    await object
      .stream()
      .cancel()
      .catch(() => undefined);
    throw refused();
  }
  // Taken first: a BYOB read leaves `buffer` detached (of length 0).
  const capacity = buffer.length;
  const read = await readBodyInto(object.stream(), buffer.subarray(0, object.size));
  if (read === null) throw refused();
  const whole = Buffer.from(read.buffer, read.byteOffset, capacity);
  return { buffer: whole, bytes: whole.subarray(0, object.size) };
}

/** Where a restore goes in the sandbox. */
export interface RestoreSettings {
  readonly workspace: string;
  readonly cacheDirectory: string;
  readonly scratchDirectory: string;
  readonly prune: readonly string[];
  readonly partBytes: number;
  readonly spoolDirectory: string;
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
  send(
    sandbox: SnapshotSandbox,
    options?: {
      readonly signal?: AbortSignal;
      readonly onProgress?: (progress: SnapshotProgress) => void;
    },
  ): Promise<void>;
  /** Releases the local copy. Idempotent. */
  dispose(): Promise<void>;
}

/** {@link PreparedRestore} before the factory says how bytes travel. */
export type AssembledRestore = Omit<PreparedRestore, "send"> & {
  send(
    sandbox: SnapshotSandbox,
    options: {
      readonly compression: Compression;
      readonly signal?: AbortSignal;
      readonly onProgress?: (progress: SnapshotProgress) => void;
    },
  ): Promise<void>;
};

/**
 * Reads snapshot `id` whole (every tree, pack and blob checked against its hash) into a local archive and the
 * listing the sandbox must match, so a tampered object is refused before anything reaches a sandbox.
 */
export async function prepareRestore(
  settings: RestoreSettings,
  input: {
    readonly store: BlobStore;
    readonly keys: SessionKeys;
    readonly id: string;
    readonly signal?: AbortSignal;
    readonly onProgress?: (progress: SnapshotProgress) => void;
  },
): Promise<AssembledRestore> {
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
    let size = 0;
    let entries = 0;
    const put = async (file: TemporaryFile, bytes: Uint8Array | string) => {
      if (file === archive) size += bytes.length;
      await file.append(bytes);
    };
    const packs = new Map<string, { readonly buffer: Buffer; readonly bytes: Buffer }>();
    const packOf = async (id: string) => {
      let pack = packs.get(id);
      if (!pack) {
        // The oldest pack's buffer is read into again: a restore allocates CACHED_PACKS buffers at most.
        let buffer: Buffer | undefined;
        if (packs.size >= CACHED_PACKS) {
          const oldest = packs.keys().next().value as string;
          buffer = packs.get(oldest)?.buffer;
          packs.delete(oldest);
        }
        buffer ??= Buffer.allocUnsafe(MAX_PACK_READ);
        pack = await readPack(store, keys.object("packs", id), buffer);
        packs.set(id, pack);
      }
      return pack.bytes;
    };
    const refuse = (path: string, what: string) =>
      new IntegrityError({
        message: `snapshot content of ${JSON.stringify(path.slice(0, 256))} ${what}`,
        context: { entry: path.slice(0, 256) },
      });
    const body = async (path: string, entry: FileEntry) => {
      if (entry.size === 0 || entry.hash === undefined) return;
      const hash = createHash("sha256");
      if (entry.pack !== undefined && entry.offset !== undefined) {
        const pack = await packOf(entry.pack);
        if (entry.offset + entry.size > pack.length) throw refuse(path, "lies beyond its pack");
        const bytes = Buffer.from(pack.buffer, pack.byteOffset + entry.offset, entry.size);
        hash.update(bytes);
        if (hash.digest("hex") !== entry.hash) throw refuse(path, "does not match its hash");
        await put(archive, bytes);
      } else {
        const object = await store.get(keys.object("blobs", entry.hash));
        if (!object)
          throw new NotFoundError({
            message: "a snapshot blob is missing from the store",
            context: { entry: path.slice(0, 256) },
          });
        if (object.size !== entry.size) {
          await object
            .stream()
            .cancel()
            .catch(() => undefined);
          throw refuse(path, "has the wrong size");
        }
        // Read through one buffer: each piece is appended (copied or written out) before the next is read.
        for await (const piece of bodyChunks(object.stream())) {
          hash.update(piece);
          await put(archive, piece);
        }
        if (hash.digest("hex") !== entry.hash) throw refuse(path, "does not match its hash");
      }
      await put(archive, bodyPadding(entry.size));
    };
    const header = (member: TarMemberHeader) => put(archive, encodeHeader(member));
    const fileRecords = (path: string, entry: FileEntry, links: number) =>
      `${path}//ef ${entry.mode.toString(8)} ${entry.size} ${entry.mtime}0 ${links} \0${path}//h${entry.hash ?? EMPTY_SHA256}\0`;
    const groups = new Map<
      string,
      { readonly first: string; readonly entry: FileEntry; readonly paths: string[] }
    >();

    const walk = async (dir: string, tree: string): Promise<void> => {
      for await (const entry of trees.entries(tree)) {
        signal?.throwIfAborted();
        const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
        entries += 1;
        progress.add(1);
        if (entry.type === "dir") {
          await header({ path, type: "dir", mode: entry.mode, mtime: entry.mtime, size: 0 });
          await put(listing, `${path}//ed ${entry.mode.toString(8)} 0 ${entry.mtime}0 1 \0`);
          await walk(path, entry.tree);
        } else if (entry.type === "symlink") {
          await header({
            path,
            type: "symlink",
            mode: 0o777,
            mtime: entry.mtime,
            size: 0,
            linkname: entry.target,
          });
          await put(listing, `${path}//el - 0 ${entry.mtime}0 1 ${entry.target}\0`);
        } else if (entry.link !== undefined && groups.has(entry.link)) {
          const group = groups.get(entry.link) as {
            first: string;
            entry: FileEntry;
            paths: string[];
          };
          if (group.entry.hash !== entry.hash || group.entry.size !== entry.size)
            throw refuse(path, "differs from the file it is a link of");
          group.paths.push(path);
          await header({
            path,
            type: "link",
            mode: entry.mode,
            mtime: entry.mtime,
            size: 0,
            linkname: `./${group.first}`,
          });
        } else {
          await header({
            path,
            type: "file",
            mode: entry.mode,
            mtime: entry.mtime,
            size: entry.size,
          });
          await body(path, entry);
          if (entry.link !== undefined)
            groups.set(entry.link, { first: path, entry, paths: [path] });
          else await put(listing, fileRecords(path, entry, 1));
        }
      }
    };
    await walk("", snapshot.tree);
    // The closures returned below share this scope: cached packs would stay alive through every send.
    packs.clear();
    for (const group of groups.values()) {
      for (const path of group.paths)
        await put(listing, fileRecords(path, group.entry, group.paths.length));
    }
    await put(archive, END_OF_ARCHIVE);
    return {
      id: input.id,
      size,
      entries,
      async send(sandbox, options) {
        const { compression, signal: sendSignal } = options;
        const sent = createProgress(options.onProgress ?? input.onProgress, {
          step: "send",
          entries,
          totalEntries: entries,
        });
        await sendRestore(
          settings,
          sandbox,
          { id: input.id, archive, listing, size },
          { compression, progress: sent, signal: sendSignal },
        );
      },
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function sendRestore(
  settings: RestoreSettings,
  sandbox: SnapshotSandbox,
  prepared: {
    readonly id: string;
    readonly archive: TemporaryFile;
    readonly listing: TemporaryFile;
    readonly size: number;
  },
  options: {
    readonly compression: Compression;
    readonly progress: Progress;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<void> {
  const { compression, progress, signal } = options;
  progress.step("send", { totalBytes: prepared.size });
  const scratch = `${settings.scratchDirectory}/.oma-restore-${randomUUID()}`;
  const made = await sandbox.run("restore.sh", RESTORE, ["prepare", scratch], signal);
  if (made.exitCode !== 0)
    throw new SandboxFailedError({
      message: `could not prepare the restore: ${made.stderr.slice(0, 300)}`,
    });
  const codec = await pickCodec(compression, made.stdout.split("\n").includes("zstd yes"));
  const running = sandbox.run(
    "restore.sh",
    RESTORE,
    ["restore", settings.workspace, scratch, codec, ...settings.prune],
    signal,
  );
  try {
    const encoded = transcode(
      counted(prepared.archive.read({ reuse: true }), progress),
      codec,
      "encode",
    );
    await sendParts(sandbox, `${scratch}/archive`, encoded, settings.partBytes, signal);
    await sendParts(
      sandbox,
      `${scratch}/listing`,
      prepared.listing.read({ reuse: true }),
      settings.partBytes,
      signal,
    );
    progress.step("verify");
  } catch (error) {
    // The script stops once its folder is gone.
    await sandbox.run("capture.sh", CAPTURE, ["clean", scratch]).catch(() => undefined);
    await running.catch(() => undefined);
    throw error;
  }
  const result = await running;
  if (result.exitCode === 3 || result.exitCode === 4) {
    const record = result.stdout.split("\n")[0]?.replace(/^\t/, "") ?? "";
    const entry = record.slice(0, Math.max(0, record.indexOf("//"))).slice(0, 256);
    throw new IntegrityError({
      message:
        result.exitCode === 3
          ? "a part of the restore did not match its hash in the sandbox"
          : `the restored workspace differs from the snapshot at ${JSON.stringify(entry)}`,
      context:
        result.exitCode === 3 ? { reason: "part_mismatch" } : { reason: "tree_mismatch", entry },
    });
  }
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `the restore failed in the sandbox (exit ${result.exitCode}): ${result.stderr.slice(0, 500)}`,
    });
  }
  // The restored tree becomes the listing cache of the snapshot, so the next checkpoint hashes only changes.
  const seed = `${settings.scratchDirectory}/.oma-snapshot-${randomUUID()}`;
  const pass = randomBytes(8).toString("hex");
  await sandbox
    .run(
      "capture.sh",
      CAPTURE,
      [
        "seed",
        settings.workspace,
        settings.cacheDirectory,
        seed,
        pass,
        prepared.id,
        ...settings.prune,
      ],
      signal,
    )
    .catch(() => undefined);
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
