import type { Readable } from "node:stream";
import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  ArchiveRejectedError,
  LimitExceededError,
  ManagedRuntimeError,
  SandboxFailedError,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ArchiveLimits,
  type TarMember,
  createHeaderInspection,
  createTarMemberReader,
  keptMode,
} from "@open-managed-agents/workspace-archive";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { asCheckpointRefusal, checkpointReadOptions } from "./archive-policy.js";
import { type Codec, transcode } from "./codec.js";
import { type PendingFile, createContentStore } from "./content-store.js";
import type { ManifestEntry, ManifestFile } from "./manifest.js";
import type { WrittenManifest } from "./manifest-writer.js";
import { createManifestSink } from "./manifest-sink.js";
import { nameTooLong, sparseFile, unreadableEntry } from "./capture-refusals.js";
import {
  SANDBOX_CACHE,
  largeFileActions,
  longNameCheck,
  parseSparseLine,
  pruneExpression,
  samplePaysScript,
  sparseCheck,
} from "./sandbox-scripts.js";
import { type WalkOutput, parallelWalk } from "./sandbox-walk.js";
import { fetchConsumedParts } from "./consumed-parts.js";
import type { StoredContents } from "./stored-contents.js";

/** Largest part of a transfer that compresses well. */
const COMPRESSED_PART_BYTES = 2 * 1024 * 1024;

/** Options of {@link captureStreamed}: the checkpointer's own, plus this checkpoint's session and pass. */
export interface StreamedCaptureInput {
  readonly client: BridgeClient;
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly sandboxId: string;
  readonly session: string;
  /** This pass's id, kept with the sandbox's listing cache for the next checkpoint's delta. */
  readonly pass: string;
  readonly excludes: readonly string[];
  readonly partBytes: number;
  readonly maxRequestBytes: number;
  readonly maxCheckpointBytes: number;
  readonly archiveLimits: ArchiveLimits;
  readonly spool: { readonly maxBytes: number; readonly directory?: string };
  /** Codecs the transfer may use, in preference order (`zstd` only when the driver can decode it). */
  readonly codecs: readonly Codec[];
  /** Contents the session is known to have stored; they are not stored again. */
  readonly stored: StoredContents;
  readonly signal?: AbortSignal;
}

/**
 * A checkpoint that reads every file once: the sandbox lists the workspace (sorted in manifest order, kept
 * as its listing cache for the next pass), then archives exactly that list with tar, compressed when it
 * pays, in parts fetched while it still writes. The driver hashes each content as it arrives, packs the small
 * ones, streams the large ones into blobs and writes the manifest line by line: no hash pass in the
 * sandbox, and nothing held per entry but the compact set of what the manifest names. For a session whose
 * store holds nothing yet, where every content must cross anyway.
 */
export async function captureStreamed(input: StreamedCaptureInput): Promise<WrittenManifest> {
  const { client, sandboxId, signal } = input;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: input.maxRequestBytes });
  const name = `.oma-manifest-${crypto.randomUUID()}`;
  const directory = `/workspace/${name}`;
  let cached = false;
  try {
    const { codec, partBytes, entries } = await listWorkspace(
      files,
      directory,
      name,
      input,
      signal,
    );
    const tally = { entries: 0 };
    const errors = `${directory}/tar-errors`;
    const written = await fetchConsumedParts({
      client,
      sandboxId,
      signal,
      partBytes,
      maxRequestBytes: input.maxRequestBytes,
      maxBytes: input.maxCheckpointBytes,
      consume: (readable) => consume(readable, codec, input, tally),
      command: (parts) => {
        // Every listed name is read or the archiving fails (exit 2): tar never skips what it cannot read. A file
        // that shrank while read is padded with zeros it never held, so that fails too.
        const archive = `tar -cf - -C /workspace --no-recursion --null --verbatim-files-from -T ${directory}/names --hard-dereference 2> ${errors}`;
        const checked = `{ ${archive}; status=$?; ! grep -q -e ' shrank by ' ${errors} || status=2; echo $status > ${parts}/tar-status; }`;
        if (codec === "none") return checked;
        const compress = codec === "zstd" ? "zstd -1 -q -c" : "gzip -1";
        return `${checked} | ${compress}`;
      },
    }).catch(async (error: unknown) => {
      throw SandboxFailedError.isInstance(error)
        ? ((await unreadNamed(files, errors)) ?? error)
        : error;
    });
    // The manifest holds exactly the entries the walk listed, or nothing is published.
    if (tally.entries !== entries) {
      await written.spool.dispose();
      throw new SandboxFailedError({
        message: `the workspace archive held ${tally.entries} of the ${entries} entries the walk listed`,
        context: { listed: entries, archived: tally.entries },
      });
    }
    // The listing becomes the sandbox's cache: the next pass lists again and hashes only what changed since.
    cached = await files
      .run(
        `{ mkdir -p ${SANDBOX_CACHE} && rm -f ${SANDBOX_CACHE}/pass ${SANDBOX_CACHE}/hashes && mv ${directory}/entries ${SANDBOX_CACHE}/records && mv ${directory}/stamp ${SANDBOX_CACHE}/stamp && printf '%s' ${shellQuote(input.pass)} > ${SANDBOX_CACHE}/pass; } 2>/dev/null || rm -rf ${SANDBOX_CACHE}; rm -rf ${directory}`,
        signal,
      )
      .then(
        () => true,
        () => false,
      );
    return written;
  } finally {
    if (!cached) await files.run(`rm -rf ${directory}`).catch(() => undefined);
  }
}

/**
 * The typed refusal naming the first entry tar reported it could not read (`tar: ./<path>: <what failed>`),
 * or null when tar reported none.
 */
async function unreadNamed(
  files: ReturnType<typeof createBridgeFiles>,
  errors: string,
): Promise<Error | null> {
  const reported = await files.run(`head -c 4096 ${errors} 2>/dev/null || true`).catch(() => "");
  const line = reported.split("\n").find((text) => text.startsWith("tar: ./"));
  if (line === undefined) return null;
  const match = /^tar: (\.\/.*?): ((?:Cannot|File|Read error|Warning)\b.*)$/.exec(line);
  return unreadableEntry(
    match?.[1] ?? line.slice("tar: ".length),
    match?.[2] ?? "tar could not read it",
  );
}

/**
 * Lists the workspace into `<directory>/entries` (the listing-cache records, sorted: manifest order) and
 * `<directory>/names` (the same paths for tar), counts them and chooses the transfer's codec and part size. A
 * device, FIFO or socket, a sparse file or a path too long for the sandbox to read is `archive_rejected`.
 */
async function listWorkspace(
  files: ReturnType<typeof createBridgeFiles>,
  directory: string,
  name: string,
  input: StreamedCaptureInput,
  signal?: AbortSignal,
): Promise<{ readonly codec: Codec; readonly partBytes: number; readonly entries: number }> {
  const prune = [`-path ./${name}`, ...input.excludes.map(pruneExpression)].join(" -o ");
  const listed: WalkOutput = { file: `${directory}/listed`, relative: true };
  // `<type> <path>` of a device, FIFO or socket (the path as `./…` when a find below the top levels met it).
  const special: WalkOutput = { file: `${directory}/special`, relative: false };
  // `<size> <blocks> <path>` of each regular file over the hole allowance: the candidates for a sparse file.
  const large: WalkOutput = { file: `${directory}/large`, relative: false };
  // zstd costs little whatever the bytes; how much the first 4 MiB of contents shrink decides the part size.
  const head = `${directory}/head`;
  const zstd = input.codecs.includes("zstd")
    ? `command -v zstd >/dev/null 2>&1 && { head -z -n 4096 ${directory}/names | xargs -0 -r cat -- 2>/dev/null | head -c 4194304 > ${head}; echo "zstd $(wc -c < ${head}) $(zstd -1 -q -c < ${head} | wc -c)"; rm -f ${head}; exit 0; }; `
    : "";
  const gzip = input.codecs.includes("gzip")
    ? `command -v gzip >/dev/null 2>&1 && ${samplePaysScript(`${directory}/entries`, directory)} && echo gzip && exit 0; `
    : "";
  const script = [
    // Two seconds back: a write in the same clock tick as the stamp still counts as newer next time.
    `mkdir -p ${directory} && touch -d "@$(( $(date +%s) - 2 ))" ${directory}/stamp`,
    "cd /workspace",
    parallelWalk({
      prune,
      scratch: directory,
      outputs: [listed, special, large],
      actions: (path, into) =>
        `\\( \\( -type f -o -type d -o -type l \\) -fprintf ${into(listed)} '${path}//e%y %m %s %T@ %l\\0' -o -fprintf ${into(special)} '%y ${path}\\0' \\) , \\( ${largeFileActions(path, into(large))} \\)`,
    }),
    `if [ -s ${directory}/special ]; then printf 'special '; head -c 4200 ${directory}/special | tr '\\0' '\\n' | head -n 1; exit 0; fi`,
    `sparse=$(${sparseCheck(`${directory}/large`)}) && if [ -n "$sparse" ]; then printf '%s\\n' "$sparse"; exit 0; fi`,
    `LC_ALL=C sort -z ${directory}/listed > ${directory}/entries`,
    `rm -f ${directory}/listed ${directory}/large`,
    // Records are `<path>//e…`: a path never holds `//`, so the first one ends it.
    `LC_ALL=C sed -z 's#//e.*##; s#^#./#' ${directory}/entries > ${directory}/names`,
    `long=$(${longNameCheck(`${directory}/names`)}) && if [ -n "$long" ]; then printf '%s\\n' "$long"; exit 0; fi`,
    `printf 'entries %s\\n' "$(tr -cd '\\0' < ${directory}/entries | wc -c)"`,
    `{ ${zstd}${gzip}echo none; }`,
  ].join(" && ");
  const output = (await files.run(script, signal)).trim();
  if (output.startsWith("special ")) {
    const [kind = "?", ...rest] = output.slice("special ".length).split(" ");
    const path = rest.join(" ").replace(/^\.\//, "");
    throw new ArchiveRejectedError({
      message: `workspace entry ${JSON.stringify(path.slice(0, 256))} is a special file (${kind})`,
      context: { entry: path.slice(0, 256), reason: "unsupported_type" },
    });
  }
  const sparse = parseSparseLine(output);
  if (sparse) throw sparseFile(sparse.path, sparse.size, sparse.allocated);
  if (output.startsWith("long ")) throw nameTooLong(output.slice("long ".length));
  const counted = /^entries (\d+)$/m.exec(output);
  if (!counted)
    throw new SandboxFailedError({ message: "listing the workspace answered unexpectedly" });
  const [codec, raw, packed] = (output.split("\n").at(-1) ?? "").split(" ");
  if (codec !== "zstd" && codec !== "gzip" && codec !== "none")
    throw new SandboxFailedError({ message: "listing the workspace answered unexpectedly" });
  // Parts of the usual size stand for ten or more times their bytes of archive when the contents shrink to a
  // third or less: smaller parts let the driver start (and keep) reading while the sandbox still archives,
  // where for bytes that do not shrink they only add requests.
  const shrinks = codec === "gzip" || (codec === "zstd" && Number(packed) * 3 < Number(raw));
  return {
    codec,
    partBytes: shrinks ? Math.min(input.partBytes, COMPRESSED_PART_BYTES) : input.partBytes,
    entries: Number(counted[1]),
  };
}

/**
 * Reads the archive as it arrives (decoded as it streams), admits every member under the restore rules and
 * limits, stores contents and writes the manifest, counting its entries into `tally`. Members arrive in
 * manifest order, since tar archives the sorted list; anything out of order fails the manifest.
 */
export async function consume(
  readable: Readable,
  codec: Codec,
  input: Pick<
    StreamedCaptureInput,
    "store" | "keyPrefix" | "session" | "stored" | "spool" | "archiveLimits" | "maxCheckpointBytes"
  >,
  tally: { entries: number } = { entries: 0 },
): Promise<WrittenManifest> {
  const sink = await createManifestSink(input.spool);
  try {
    const contents = createContentStore({
      store: input.store,
      keyPrefix: input.keyPrefix,
      session: input.session,
      stored: input.stored,
      spool: input.spool,
      sink,
    });
    const inspection = createHeaderInspection(checkpointReadOptions(input.archiveLimits));
    const reader = createTarMemberReader(decodedArchive(readable, codec));
    try {
      for (let member = await reader.next(); member !== null; member = await reader.next()) {
        if (reader.position > input.maxCheckpointBytes) {
          throw new LimitExceededError({
            message: `checkpoint exceeds ${input.maxCheckpointBytes} bytes`,
            context: { limit: "maxCheckpointBytes", maxCheckpointBytes: input.maxCheckpointBytes },
          });
        }
        if (member.type === "other") {
          throw new ArchiveRejectedError({
            message: `workspace entry ${JSON.stringify(member.name.slice(0, 256))} is a special file (type ${JSON.stringify(member.typeflag)})`,
            context: { entry: member.name.slice(0, 256), reason: "unsupported_type" },
          });
        }
        inspection.admit({
          name: member.name,
          type: member.type,
          mode: member.mode,
          mtime: member.mtime,
          size: member.size,
          linkname: member.linkname,
        });
        const entry = entryOf(member);
        tally.entries += 1;
        if (entry.type !== "file") await contents.place(entry);
        else if (entry.size <= contents.smallBytes)
          await contents.addSmall(entry, await reader.readBody());
        else await contents.addLarge(entry, reader.bodyChunks());
        await sink.flushed();
      }
      await inspection.finish();
    } catch (error) {
      // Left early: the decoder behind the reader (a process, when it is zstd's) is ended with it.
      await reader.close().catch(() => undefined);
      throw asCheckpointRefusal(error);
    }
    await contents.finish();
    return await sink.finish();
  } catch (error) {
    await sink.dispose();
    throw error;
  }
}

/** The manifest entry a member describes (a file's content, not yet read, is filled in by the content store). */
function entryOf(
  member: TarMember,
): Exclude<ManifestEntry, ManifestFile> | Omit<PendingFile, "sha256"> {
  const path = member.name.startsWith("./")
    ? member.name.slice(2).replace(/\/+$/, "")
    : member.name.replace(/\/+$/, "");
  const mode = keptMode(member.mode);
  const mtime = Math.min(Math.max(member.mtime, 0), 2 ** 33);
  if (member.type === "directory") return { type: "directory", path, mode, mtime };
  if (member.type === "symlink")
    return { type: "symlink", path, mode, mtime, target: member.linkname ?? "" };
  if (member.type === "file") return { type: "file", path, mode, mtime, size: member.size };
  // tar stores hard links as files here (--hard-dereference); admission refused every other type.
  throw new SandboxFailedError({
    message: "the workspace archive holds a member the listing cannot describe",
    context: { path: path.slice(0, 256) },
  });
}

/** The archive decoded; a stream that does not decode is the sandbox's failure. */
async function* decodedArchive(readable: Readable, codec: Codec): AsyncGenerator<Buffer> {
  try {
    yield* transcode(readable, codec, "decode");
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) throw error;
    throw new SandboxFailedError({
      message: "the sandbox sent an archive that could not be decoded",
      cause: error,
    });
  }
}
