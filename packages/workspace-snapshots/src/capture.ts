import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createTarMemberReader, keptMode } from "@open-managed-agents/workspace-archive";
import { type Change, type ListedEntry, readChanges } from "./change-stream.js";
import { type Codec, type Compression, pickCodec, transcode } from "./codec.js";
import { HEX64, type SessionKeys } from "./keys.js";
import {
  type FileEntry,
  type SnapshotObject,
  type TreeEntry,
  compareNames,
  encodeObject,
} from "./objects.js";
import { sendParts } from "./parts.js";
import {
  MAX_HOLE_BYTES,
  MAX_PATH_BYTES,
  changedDuringCapture,
  nameTooLong,
  sparseFile,
  tooManyEntries,
  unreadableEntry,
  unsupportedType,
} from "./refusals.js";
import { type Progress, type SnapshotProgress, createProgress } from "./progress.js";
import type { SnapshotSandbox } from "./sandbox-port.js";
import CAPTURE_SCRIPT from "./scripts/capture.sh";
import HASH_FILES_SCRIPT from "./scripts/hash-files.sh";
import LISTING_CACHE_SCRIPT from "./scripts/listing-cache.sh";
import RECEIVE_SCRIPT from "./scripts/receive.sh";
import { createTreeBuilder, createTreeStore, createWriteQueue, putOnce } from "./stored-objects.js";
import { type TemporaryFile, createTemporaryFile, recordsOf } from "./temporary-file.js";

/** Contents up to this size go into packs; larger ones are blobs of their own. */
export const PACK_CONTENT_BYTES = 256 * 1024;
/** A pack is closed once its contents reach this size. */
export const PACK_BYTES = 4 * 1024 * 1024;
/**
 * Contents remembered by hash within one checkpoint, so a repeated content is fetched once. Bounded because
 * each costs the heap over 100 bytes; a repeat past it is fetched again, never stored wrong.
 */
const REMEMBERED_CONTENTS = 20_000;
/** Packs and blobs written while the next content is read: a capture holds this many packs and one more. */
const CONTENT_WRITES_IN_FLIGHT = 2;

export const CAPTURE = [
  RECEIVE_SCRIPT,
  HASH_FILES_SCRIPT,
  LISTING_CACHE_SCRIPT,
  CAPTURE_SCRIPT,
].join("\n");

/** Where the sandbox keeps its things outside the workspace, and what a capture may hold. */
export interface CaptureSettings {
  readonly workspace: string;
  readonly cacheDirectory: string;
  readonly scratchDirectory: string;
  readonly prune: readonly string[];
  readonly maxEntries: number;
  readonly partBytes: number;
  readonly spoolDirectory: string;
}

export interface CaptureInput {
  readonly store: BlobStore;
  readonly keys: SessionKeys;
  readonly sandbox: SnapshotSandbox;
  readonly compression: Compression;
  readonly source: Readonly<Record<string, string>>;
  readonly now: () => Date;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: SnapshotProgress) => void;
}

/** A published snapshot: its hash is its id. */
export interface SnapshotRef {
  readonly id: string;
  readonly session: string;
  readonly parent: string | null;
  readonly entries: number;
}

type Location = { readonly pack: string; readonly offset: number } | "blob";
interface Needed {
  readonly path: string;
  readonly hash: string;
  readonly size: number;
  readonly pack?: string;
  readonly offset?: number;
}

/** A needed content as the capture spools it: `<hash> <size> <pack or -> <offset or -> <path>`, NUL-terminated. */
const needRecord = (need: Needed) =>
  `${need.hash} ${need.size} ${need.pack ?? "-"} ${need.offset ?? "-"} ${need.path}\0`;

function readNeed(record: string): Needed {
  const [hash = "", size = "", pack = "-", offset = "-"] = record.split(" ", 4);
  const path = record.slice(hash.length + size.length + pack.length + offset.length + 4);
  return pack === "-"
    ? { path, hash, size: Number(size) }
    : { path, hash, size: Number(size), pack, offset: Number(offset) };
}

/** The peekable stream of changes a capture merges with the old trees: only reading on waits. */
function peekable(source: AsyncGenerator<Change>) {
  let held: Change | null | undefined;
  return {
    peek(): Change | null | Promise<Change | null> {
      if (held !== undefined) return held;
      return source.next().then((next) => (held = next.done ? null : next.value));
    },
    take() {
      held = undefined;
    },
  };
}

/** The path below `dir` that `path` is in, as the child's name; null when it lies elsewhere. */
function childOf(dir: string, path: string): string | null {
  if (dir !== "" && !path.startsWith(`${dir}/`)) return null;
  const rest = dir === "" ? path : path.slice(dir.length + 1);
  const slash = rest.indexOf("/");
  return slash < 0 ? rest : rest.slice(0, slash);
}

function checkRun(
  result: { exitCode: number; stdout: string; stderr: string },
  what: string,
): Map<string, string> {
  const lines = new Map<string, string>();
  for (const line of result.stdout.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0 && !lines.has(line.slice(0, space)))
      lines.set(line.slice(0, space), line.slice(space + 1));
  }
  const unreadable = lines.get("unreadable");
  if (result.exitCode === 5 && unreadable !== undefined)
    throw unreadableEntry(pathInError(unreadable), unreadable);
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `${what} failed in the sandbox (exit ${result.exitCode}): ${result.stderr.slice(0, 500)}`,
    });
  }
  return lines;
}

/** The workspace path an error line of find, sha256sum or tar names, as well as it can be told. */
function pathInError(line: string): string {
  const quoted = /['‘]\.\/(.+?)['’]: /.exec(line) ?? /^[a-z0-9]+: \.\/(.+?): /.exec(line);
  return quoted?.[1] ?? line.slice(0, 256);
}

/**
 * Takes a snapshot of the sandbox's workspace: lists it, compares the listing with the sandbox's cache of the
 * last snapshot's listing, hashes what changed, rewrites the trees on the changed paths only (reading the
 * parent's trees there), fetches the contents the store lacks in one archive, and publishes the snapshot
 * object last. Without a cache of a snapshot the store holds, everything counts as changed.
 */
export async function captureSnapshot(
  settings: CaptureSettings,
  input: CaptureInput,
): Promise<SnapshotRef> {
  const { store, keys, sandbox, signal } = input;
  const progress = createProgress(input.onProgress);
  progress.step("list");
  const queue = createWriteQueue();
  const trees = createTreeStore(store, keys, queue);
  const scratch = `${settings.scratchDirectory}/.oma-snapshot-${randomUUID()}`;
  // Nameless local files: a process killed mid-capture leaves nothing in the spool folder.
  const needLines = await createTemporaryFile(settings.spoolDirectory);
  const needPaths = await createTemporaryFile(settings.spoolDirectory);
  const pass = randomBytes(8).toString("hex");
  let cleaned = false;
  try {
    const list = async (parent: string) => {
      const args = [
        "list",
        settings.workspace,
        settings.cacheDirectory,
        scratch,
        pass,
        parent,
        ...settings.prune,
      ];
      return checkRun(
        await sandbox.run("capture.sh", CAPTURE, args, signal),
        "listing the workspace",
      );
    };
    // The listing compares with whatever snapshot the cache names; one the store does not hold for this
    // session (rare: a sweep, another session's restore) costs a second listing against nothing.
    let listed = await list("cached");
    const base =
      listed.get("base") === "-" ? null : await verifiedParent(listed.get("base"), trees);
    if (base === null && listed.get("base") !== "-") listed = await list("-");
    const entries = Number(listed.get("entries"));
    if (!Number.isSafeInteger(entries))
      throw new SandboxFailedError({ message: "the sandbox's listing reported no entry count" });
    if (entries > settings.maxEntries) throw tooManyEntries(settings.maxEntries, entries);
    const unreadable = listed.get("unreadable") ?? "the sandbox did not hash it";
    const codec = await pickCodec(input.compression, listed.get("zstd") === "yes");
    // Unchanged entries are done once listed; a changed one once its tree entry (and content) is stored.
    const changed = Number(listed.get("changed"));
    progress.step("trees", {
      totalEntries: entries,
      doneEntries: Number.isSafeInteger(changed) ? Math.max(0, entries - changed) : 0,
    });

    let needed = 0;
    let neededBytes = 0;
    const known = new Map<string, Location>();
    let packId = randomBytes(16).toString("hex");
    let packFill = 0;

    const locate = async (
      path: string,
      hash: string,
      size: number,
      old: TreeEntry | undefined,
    ): Promise<Location> => {
      if (old?.type === "file" && old.hash === hash && old.size === size)
        return old.pack && old.offset !== undefined
          ? { pack: old.pack, offset: old.offset }
          : "blob";
      const remembered = known.get(hash);
      if (remembered) return remembered;
      let location: Location;
      if (size > PACK_CONTENT_BYTES) {
        const head = await store.head(keys.object("blobs", hash));
        if (head && head.size === size) return "blob";
        location = "blob";
      } else {
        if (packFill + size > PACK_BYTES) {
          packId = randomBytes(16).toString("hex");
          packFill = 0;
        }
        location = { pack: packId, offset: packFill };
        packFill += size;
      }
      const need: Needed =
        location === "blob"
          ? { path, hash, size }
          : { path, hash, size, pack: location.pack, offset: location.offset };
      await needLines.append(needRecord(need));
      await needPaths.append(`./${path}\0`);
      needed += 1;
      neededBytes += size;
      if (known.size < REMEMBERED_CONTENTS) known.set(hash, location);
      return location;
    };

    const fileEntry = async (
      name: string,
      change: Change,
      listedEntry: ListedEntry,
      old: TreeEntry | undefined,
    ): Promise<FileEntry> => {
      const { path } = change;
      if (listedEntry.size - listedEntry.blocks * 512 > MAX_HOLE_BYTES)
        throw sparseFile(path, listedEntry.size, listedEntry.blocks * 512);
      const { mode, mtime, size } = listedEntry;
      // Built field by field in the format's order: spreading objects of varying shapes is slow (see the docs).
      const entry: FileEntry = { name, type: "file", mode: keptMode(mode), mtime, size };
      if (size > 0) {
        if (change.hash === null || !HEX64.test(change.hash))
          throw unreadableEntry(path, unreadable);
        entry.hash = change.hash;
        const location = await locate(path, change.hash, size, old);
        if (location !== "blob") {
          entry.pack = location.pack;
          entry.offset = location.offset;
        }
      }
      if (listedEntry.links > 1) entry.link = listedEntry.inode;
      return entry;
    };

    const changes = peekable(readChanges(sandbox.readFile(`${scratch}/changes`, signal)));

    /**
     * The new tree of folder `dir`, merging its old tree (when it had one) with the changes below it, and the
     * folder's own change when it came among them: a folder's record sorts after its children whose names
     * start with a byte below `/` (`.git`, `-x`), so its block of changes may hold it anywhere.
     */
    const buildDir = async (
      dir: string,
      oldTree: string | null,
    ): Promise<{ tree: string; own: Change | null }> => {
      const builder = createTreeBuilder(trees);
      // The old tree's entries a chunk at a time: only a chunk boundary waits.
      const oldChunks = oldTree === null ? null : trees.chunks(oldTree);
      let oldEntries: readonly TreeEntry[] = [];
      let oldIndex = 0;
      const oldEntry = async (): Promise<TreeEntry | undefined> => {
        while (oldIndex >= oldEntries.length) {
          signal?.throwIfAborted();
          const next = oldChunks ? await oldChunks.next() : null;
          if (!next || next.done) return undefined;
          oldEntries = next.value;
          oldIndex = 0;
        }
        return oldEntries[oldIndex];
      };
      let ownOfDir: Change | null = null;
      for (;;) {
        signal?.throwIfAborted();
        const change = await changes.peek();
        if (change !== null && dir !== "" && change.path === dir) {
          changes.take();
          ownOfDir = change;
          continue;
        }
        const name = change ? childOf(dir, change.path) : null;
        // Old entries before the next changed name (all the rest when no change lies below) stay as they are.
        let kept = oldEntries[oldIndex] ?? (await oldEntry());
        while (kept && (name === null || compareNames(kept.name, name) < 0)) {
          oldIndex += 1;
          const written = builder.add(kept);
          if (written) await written;
          kept = oldEntries[oldIndex] ?? (await oldEntry());
        }
        if (name === null || change === null) break;
        const previous = kept?.name === name ? oldEntries[oldIndex++] : undefined;
        const path = dir === "" ? name : `${dir}/${name}`;
        if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw nameTooLong(path);
        let own: Change | null = null;
        if (change.path === path) {
          changes.take();
          own = change;
        }
        // A change below the path makes it a folder, now or before; its own change may follow.
        if (own === null || own.entry?.type === "d") {
          const built = await buildDir(path, previous?.type === "dir" ? previous.tree : null);
          own ??= built.own;
          if (own === null && previous?.type !== "dir")
            throw new SandboxFailedError({
              message:
                "the sandbox's listing names entries below a path it does not list as a folder",
              context: { entry: path.slice(0, 256) },
            });
          if (own === null || own.entry?.type === "d") {
            const meta = own?.entry
              ? { mode: keptMode(own.entry.mode), mtime: own.entry.mtime }
              : {
                  mode: (previous as Extract<TreeEntry, { type: "dir" }>).mode,
                  mtime: (previous as TreeEntry).mtime,
                };
            await builder.add({ name, type: "dir", ...meta, tree: built.tree });
            if (own?.entry) progress.add(1);
            continue;
          }
          // The folder is gone or is something else now: the tree just built is left for the sweep.
        } else {
          // Not a folder (any more): whatever was below it is gone.
          for (
            let below = await changes.peek();
            below?.path.startsWith(`${path}/`);
            below = await changes.peek()
          )
            changes.take();
        }
        const listedEntry = own.entry;
        if (!listedEntry) continue;
        const neededBefore = needed;
        if (listedEntry.type === "f")
          await builder.add(await fileEntry(name, own, listedEntry, previous));
        else if (listedEntry.type === "l")
          await builder.add({
            name,
            type: "symlink",
            mtime: listedEntry.mtime,
            target: listedEntry.target,
          });
        else throw unsupportedType(path, listedEntry.type);
        // A content to fetch counts once it is stored.
        if (needed === neededBefore) progress.add(1);
      }
      return { tree: await builder.finish(), own: ownOfDir };
    };

    const { tree: root } = await buildDir("", base?.tree ?? null);
    if (needed > 0) {
      progress.step("contents", { totalBytes: neededBytes });
      await fetchContents({ settings, input, codec, scratch, needLines, needPaths, progress });
    }
    progress.step("publish");
    const snapshot: SnapshotObject = {
      version: 1,
      session: keys.session,
      tree: root,
      parent: base?.id ?? null,
      created: input.now().toISOString(),
      source: { ...input.source },
      entries,
    };
    const { bytes, hash } = encodeObject(snapshot);
    // Every tree and content is stored before the sandbox's cache names this snapshot: a checkpoint whose
    // writes failed leaves the cache of the last one, so the next builds on that instead of a full pass.
    await queue.drain();
    // The cache is kept while the snapshot is stored (best effort): one naming a snapshot whose own write then
    // failed costs the next checkpoint a full pass, never a wrong tree.
    const committing = sandbox
      .run("capture.sh", CAPTURE, ["commit", settings.cacheDirectory, scratch, hash], signal)
      .catch(() => null);
    try {
      // The snapshot goes last: until it is stored, nothing names the objects above.
      await putOnce(store, keys.object("snapshots", hash), bytes, "application/json");
    } finally {
      // A commit removes the scratch folder itself: one exec less on every checkpoint.
      cleaned = (await committing)?.exitCode === 0;
    }
    progress.finish();
    return { id: hash, session: keys.session, parent: snapshot.parent, entries };
  } finally {
    if (!cleaned)
      await sandbox.run("capture.sh", CAPTURE, ["clean", scratch]).catch(() => undefined);
    await needLines.close();
    await needPaths.close();
  }
}

/** Snapshot `id` (as the sandbox's listing cache names it) when the store holds it for this session. */
async function verifiedParent(id: string | undefined, trees: ReturnType<typeof createTreeStore>) {
  if (id === undefined || !HEX64.test(id)) return null;
  try {
    const snapshot = await trees.snapshot(id);
    return { id, tree: snapshot.tree };
  } catch {
    // A cache naming a snapshot that is gone, altered or another session's costs a full pass.
    return null;
  }
}

/** Fetches the needed contents in one archive and stores them: small ones in packs, large ones as blobs. */
async function fetchContents(context: {
  settings: CaptureSettings;
  input: CaptureInput;
  codec: Codec;
  scratch: string;
  needLines: TemporaryFile;
  needPaths: TemporaryFile;
  progress: Progress;
}): Promise<void> {
  const { settings, input, codec, scratch, progress } = context;
  const { sandbox, store, keys, signal } = input;
  await sendParts(
    sandbox,
    `${scratch}/need-parts`,
    context.needPaths.read({ reuse: true }),
    settings.partBytes,
    signal,
  );
  checkRun(
    await sandbox.run(
      "capture.sh",
      CAPTURE,
      ["bundle", settings.workspace, scratch, codec],
      signal,
    ),
    "archiving changed files",
  );
  const reader = createTarMemberReader(
    transcode(sandbox.readFile(`${scratch}/bundle`, signal), codec, "decode"),
  );
  const records = recordsOf(context.needLines.read({ reuse: true }));
  interface OpenPack {
    readonly id: string;
    readonly bytes: Buffer;
    filled: number;
  }
  // Contents have a queue of their own, so tree writes never wait behind them and few packs are held at once.
  const contentWrites = createWriteQueue(CONTENT_WRITES_IN_FLIGHT);
  let pack = null as OpenPack | null;
  // Buffers of packs written, filled again: a capture allocates CONTENT_WRITES_IN_FLIGHT + 1 of them at most.
  const spare: Buffer[] = [];
  const closePack = async (open: OpenPack | null) => {
    if (!open) return;
    const bytes = open.bytes.subarray(0, open.filled);
    await contentWrites.push(async () => {
      await putOnce(store, keys.object("packs", open.id), bytes, "application/octet-stream");
      spare.push(open.bytes);
    });
  };
  try {
    for await (const record of records) {
      const need = readNeed(record);
      const member = await reader.next();
      const name = member?.name.replace(/^(\.\/)+/, "");
      if (!member || name !== need.path || member.type !== "file")
        throw unreadableEntry(need.path, "missing from the sandbox's archive");
      if (member.size !== need.size) throw changedDuringCapture(need.path);
      const hash = createHash("sha256");
      if (need.pack !== undefined) {
        if (pack?.id !== need.pack) {
          await closePack(pack);
          // A pack is closed before a content would take it past PACK_BYTES, so this holds any pack.
          pack = { id: need.pack, bytes: spare.pop() ?? Buffer.allocUnsafe(PACK_BYTES), filled: 0 };
        }
        const open: OpenPack = pack;
        const fits = open.filled === need.offset && open.filled + need.size <= PACK_BYTES;
        if (!fits) throw changedDuringCapture(need.path);
        for await (const piece of reader.bodyChunks()) {
          hash.update(piece);
          open.bytes.set(piece, open.filled);
          open.filled += piece.length;
        }
        if (hash.digest("hex") !== need.hash) throw changedDuringCapture(need.path);
        progress.add(1, need.size);
      } else {
        const spooled = await createTemporaryFile(settings.spoolDirectory);
        let queued = false;
        try {
          for await (const piece of reader.bodyChunks()) {
            hash.update(piece);
            await spooled.append(piece);
          }
          if (hash.digest("hex") !== need.hash) throw changedDuringCapture(need.path);
          // The store takes the blob while the archive's next members are read; the spool is its only copy.
          await contentWrites.push(async () => {
            try {
              // A byte stream: a store that reads it in BYOB mode has each read land in its own buffer.
              await store.put(keys.object("blobs", need.hash), spooled.stream(), {
                contentType: "application/octet-stream",
                ifNoneMatch: "*",
                contentLength: need.size,
              });
              progress.add(1, need.size);
            } finally {
              await spooled.close();
            }
          });
          queued = true;
        } finally {
          if (!queued) await spooled.close();
        }
      }
    }
    await closePack(pack);
    await contentWrites.drain();
  } finally {
    // A failed capture still lets the writes in flight end, so their spools close before it returns.
    await contentWrites.drain().catch(() => undefined);
    await records.return(undefined);
    await reader.close();
  }
}
