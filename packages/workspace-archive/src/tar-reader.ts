import { createHash, type Hash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import tar, { type Extract } from "tar-stream";
import { type ArchiveSource, toNodeReadable } from "./archive-source.js";
import { rejectCorrupt, rejectEntry } from "./rejections.js";

/** Counts (and optionally hashes) the raw bytes read from the source, before decompression. */
export interface SourceMeter {
  bytes: number;
  gzip: boolean;
  readonly hash: Hash | null;
}

/** Creates a meter; `hash` adds a sha256 of the raw bytes. */
export function createSourceMeter(hash: boolean): SourceMeter {
  return { bytes: 0, gzip: false, hash: hash ? createHash("sha256") : null };
}

/** One archive member as the parser yields it: `header` plus a readable body. */
export type TarEntry = Extract extends AsyncIterable<infer Source> ? Source : never;

const GZIP_MAGIC = [0x1f, 0x8b] as const;
const TAR_PARSE_ERROR =
  /tar header|Unexpected end of data|Header exceeds max size|Invalid header|No body allowed|entry body ended early/i;

/**
 * Parses a tar (or gzip'd tar) source and yields its entries in order. Every entry's body must be
 * consumed or resumed before the next one is requested. Parse and decompression failures become
 * `archive_rejected`; leaving the loop early destroys the source.
 */
export async function* readTarEntries(
  source: ArchiveSource,
  gzip: boolean | "auto",
  meter: SourceMeter,
): AsyncGenerator<TarEntry> {
  const input = Readable.from(decodeSource(toNodeReadable(source), gzip, meter), {
    objectMode: false,
    highWaterMark: 256 * 1024,
  });
  const extract = tar.extract();
  const feeding = pipeline(input, extract as unknown as NodeJS.WritableStream);
  feeding.catch(() => undefined);
  let lastEntry: string | null = null;
  try {
    for await (const entry of extract) {
      lastEntry = entry.header.name;
      refuseReplacedBytes(entry.header.name, entry.header.linkname);
      yield entry;
    }
    await feeding;
  } catch (error) {
    throw toArchiveError(error, lastEntry);
  } finally {
    if (!extract.destroyed) extract.destroy();
  }
}

/**
 * tar-stream decodes names and link targets as UTF-8 with U+FFFD for bytes that are not: a name holding it
 * would be written as other bytes than the archive holds, so it is refused (`invalid_name`). A name that
 * really holds U+FFFD is refused too: this reader cannot tell the two apart.
 */
function refuseReplacedBytes(name: string, linkname: string | null | undefined): void {
  if (name.includes("\uFFFD"))
    throw rejectEntry(
      name,
      "invalid_name",
      "the name is not valid UTF-8 (or holds U+FFFD, which this reader cannot tell from such bytes)",
    );
  if (linkname?.includes("\uFFFD"))
    throw rejectEntry(
      name,
      "invalid_name",
      "the link target is not valid UTF-8 (or holds U+FFFD, which this reader cannot tell from such bytes)",
    );
}

/**
 * Maps parser, decompression and truncation failures (also when they surface while an entry body is
 * read) to `archive_rejected`; typed errors and source errors pass through unchanged.
 */
export function toArchiveError(error: unknown, lastEntry: string | null): unknown {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : "";
  if ((typeof code === "string" && code.startsWith("Z_")) || TAR_PARSE_ERROR.test(message))
    return rejectCorrupt(error, lastEntry);
  return error;
}

async function* decodeSource(
  input: Readable,
  gzip: boolean | "auto",
  meter: SourceMeter,
): AsyncGenerator<Buffer> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < GZIP_MAGIC.length) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    headBytes += next.value.length;
  }
  const first = Buffer.concat(head);
  meter.gzip = gzip === "auto" ? first[0] === GZIP_MAGIC[0] && first[1] === GZIP_MAGIC[1] : gzip;
  const raw = rawChunks(first, ended ? null : iterator, meter);
  if (!meter.gzip) {
    yield* raw;
    return;
  }
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  const inflating = pipeline(Readable.from(raw, { objectMode: false }), gunzip);
  inflating.catch(() => undefined);
  yield* gunzip as AsyncIterable<Buffer>;
  await inflating;
}

async function* rawChunks(
  first: Buffer,
  rest: AsyncIterator<Buffer> | null,
  meter: SourceMeter,
): AsyncGenerator<Buffer> {
  const account = (chunk: Buffer) => {
    meter.bytes += chunk.length;
    meter.hash?.update(chunk);
    return chunk;
  };
  if (first.length > 0) yield account(first);
  if (rest === null) return;
  for await (const chunk of { [Symbol.asyncIterator]: () => rest }) yield account(chunk);
}
