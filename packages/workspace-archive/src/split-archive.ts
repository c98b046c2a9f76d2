import { createHash } from "node:crypto";
import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";
import type { Header } from "tar-stream";
import type { ArchiveSource } from "./archive-source.js";
import { createByteReader, type ByteReader } from "./byte-reader.js";
import { padToBlock } from "./tar-blocks.js";
import { toMemberName } from "./entry-name.js";
import { type AdmittedEntry, EntryGuard } from "./entry-guard.js";
import type { JoinPlan } from "./join-plan.js";
import { parseSplitOptions, type ReadArchiveOptions } from "./options.js";
import { type ArchivePart, PartBuilder } from "./part-builder.js";
import { rejectEntry } from "./rejections.js";
import { memberHeaderSize, type MemberHeader } from "./tar-header.js";
import { createSourceMeter, readTarEntries, toArchiveError } from "./tar-reader.js";

/** Options of {@link splitArchive}. */
export interface SplitArchiveOptions extends ReadArchiveOptions {
  /** Upper bound of every part's size, end marker included (≥ 16 KiB). */
  readonly maxPartBytes: number;
  /** Folder (relative to the root) that receives chunks of oversize files. @default ".oma-chunks" */
  readonly chunkDirectory?: string;
}

/** The parts of one archive, produced lazily; iterate once. */
export interface SplitArchive extends AsyncIterable<ArchivePart> {
  /** Join plans of chunked files. Complete once iteration has finished; apply them after every part. */
  readonly joinPlans: readonly JoinPlan[];
}

/** Smallest first chunk worth starting in a part that already holds other members. */
const MIN_CHUNK_BYTES = 64 * 1024;
const CHUNK_NAME_DIGITS = 8;

/**
 * Re-emits one archive as self-contained tar parts of at most `maxPartBytes`, cut at member boundaries;
 * a file larger than a part becomes numbered chunks plus a {@link JoinPlan}. Members pass the same checks
 * as {@link extractArchive}. Only the part being built is held in memory. Extract the parts in order
 * (the first with `mode: "replace"`, the rest with `mode: "merge"`), then apply the join plans.
 */
export function splitArchive(source: ArchiveSource, options: SplitArchiveOptions): SplitArchive {
  const resolved = parseSplitOptions(options);
  const joinPlans: JoinPlan[] = [];
  let started = false;
  return {
    joinPlans,
    [Symbol.asyncIterator]() {
      if (started) throw new Error("splitArchive results can be iterated only once");
      started = true;
      return withArchiveErrors(splitParts(source, resolved, joinPlans));
    },
  };
}

async function* withArchiveErrors(parts: AsyncGenerator<ArchivePart>): AsyncGenerator<ArchivePart> {
  try {
    yield* parts;
  } catch (error) {
    throw toArchiveError(error, null);
  }
}

async function* splitParts(
  source: ArchiveSource,
  options: ReturnType<typeof parseSplitOptions>,
  joinPlans: JoinPlan[],
): AsyncGenerator<ArchivePart> {
  const guard = new EntryGuard(options);
  const chunked = new Map<string, JoinPlan & { links: string[] }>();
  const capacity = PartBuilder.capacity(options.maxPartBytes);
  let part = new PartBuilder(0, options.maxPartBytes);
  const nextPart = () => {
    const finished = part.finish();
    part = new PartBuilder(part.index + 1, options.maxPartBytes);
    return finished;
  };
  for await (const entry of readTarEntries(source, options.gzip, createSourceMeter(false))) {
    const admitted = guard.admit(entry.header);
    if (
      admitted.path === options.chunkDirectory ||
      admitted.path.startsWith(`${options.chunkDirectory}/`)
    ) {
      throw rejectEntry(
        admitted.name,
        "entry_conflict",
        `it lies in the chunk folder ${JSON.stringify(options.chunkDirectory)}`,
      );
    }
    const plan =
      admitted.kind === "hardlink" ? chunked.get(admitted.linkTarget as string) : undefined;
    if (plan !== undefined) {
      plan.links.push(toMemberName(admitted.path, false));
      entry.resume();
      continue;
    }
    const header = memberHeader(admitted, entry.header);
    const total = memberHeaderSize(header) + padToBlock(header.size);
    const body = createByteReader(entry as AsyncIterable<Buffer>);
    if (total <= capacity) {
      if (total > part.remaining) yield nextPart();
      part.add(header, await bodyChunks(body, header.size));
      entry.resume();
      continue;
    }
    if (admitted.kind !== "file") {
      throw new LimitExceededError({
        message: `archive entry ${JSON.stringify(admitted.name)} has a header larger than a part`,
        context: {
          entry: admitted.name,
          limit: "maxPartBytes",
          max: options.maxPartBytes,
          actual: total,
        },
      });
    }
    const chunkPlan = { ...planFor(admitted, options.chunkDirectory), links: [] as string[] };
    for await (const finished of writeChunks(chunkPlan, header, body, () => part, nextPart))
      yield finished;
    entry.resume();
    chunked.set(admitted.path, chunkPlan);
    joinPlans.push(chunkPlan);
  }
  await guard.verifySymlinks();
  if (part.entries > 0 || part.index === 0) yield part.finish();
}

/** Emits a large file as chunks, filling the current part first; yields every part it completes. */
async function* writeChunks(
  plan: JoinPlan & { chunks: { name: string; size: number }[]; sha256: string },
  header: MemberHeader,
  body: ByteReader,
  current: () => PartBuilder,
  nextPart: () => ArchivePart,
): AsyncGenerator<ArchivePart> {
  const hash = createHash("sha256");
  let remaining = header.size;
  while (remaining > 0) {
    const name = `${plan.chunkDirectory}/${String(plan.chunks.length).padStart(CHUNK_NAME_DIGITS, "0")}`;
    const chunkHeader: MemberHeader = { ...header, name, mode: 0o600, linkname: null, size: 0 };
    const room = Math.floor((current().remaining - memberHeaderSize(chunkHeader)) / 512) * 512;
    const size = Math.min(remaining, room);
    if (size < remaining && size < MIN_CHUNK_BYTES && current().entries > 0) {
      yield nextPart();
      continue;
    }
    const data = await bodyChunks(body, size);
    for (const buffer of data) hash.update(buffer);
    current().add({ ...chunkHeader, size }, data);
    plan.chunks.push({ name, size });
    remaining -= size;
    if (remaining > 0) yield nextPart();
  }
  plan.sha256 = hash.digest("hex");
}

function planFor(
  entry: AdmittedEntry,
  chunkDirectory: string,
): JoinPlan & { chunks: { name: string; size: number }[]; sha256: string } {
  const id = createHash("sha256").update(entry.path).digest("hex").slice(0, 16);
  return {
    version: 1,
    target: toMemberName(entry.path, false),
    mode: entry.mode,
    mtime: entry.mtime,
    size: entry.size,
    sha256: "",
    chunkDirectory: `./${chunkDirectory}/${id}`,
    chunks: [],
    links: [],
  };
}

function memberHeader(entry: AdmittedEntry, source: Header): MemberHeader {
  const linkname =
    entry.kind === "symlink"
      ? entry.linkTarget
      : entry.kind === "hardlink"
        ? toMemberName(entry.linkTarget as string, false)
        : null;
  return {
    name: toMemberName(entry.path, entry.kind === "directory"),
    type: entry.kind === "hardlink" ? "link" : entry.kind,
    mode: entry.mode,
    mtime: entry.mtime,
    size: entry.size,
    linkname,
    uid: source.uid ?? 0,
    gid: source.gid ?? 0,
    uname: source.uname ?? "",
    gname: source.gname ?? "",
  };
}

/**
 * Exactly `size` bytes of an entry body as the chunks it arrived in: tar-stream hands out fresh buffers, so
 * they are kept as they are, without a copy.
 */
async function bodyChunks(body: ByteReader, size: number): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  let got = 0;
  for await (const chunk of body.chunks(size)) {
    chunks.push(chunk);
    got += chunk.byteLength;
  }
  if (got < size) throw new Error("entry body ended early");
  return chunks;
}
