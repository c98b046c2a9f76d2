import { Readable } from "node:stream";
import type { ManifestEntry } from "./manifest.js";
import { MAX_LINE_BYTES } from "./manifest-lines.js";
import type { Spool } from "./spool.js";
import { splitRecords } from "./split-records.js";

/** Lines written to the spool at a time. */
const CHUNK_LINES = 2048;

/**
 * Writes values as JSON lines into `spool` (the driver's own temporary file), `chunkLines` at a time, to be
 * read back in order with {@link readSpooledLines}: what would otherwise be held as objects until its last
 * use is held as one chunk of text at most.
 */
export function createLineWriter(spool: Pick<Spool, "append">, chunkLines = CHUNK_LINES) {
  let lines: string[] = [];
  const flush = async () => {
    if (lines.length === 0) return;
    const chunk = Buffer.from(`${lines.join("\n")}\n`);
    lines = [];
    await spool.append(Readable.toWeb(Readable.from([chunk])) as ReadableStream<Uint8Array>);
  };
  return {
    /** Adds a value; a promise when a chunk of lines is due to be written (await it before the next). */
    add(value: unknown): Promise<void> | undefined {
      lines.push(JSON.stringify(value));
      return lines.length >= chunkLines ? flush() : undefined;
    },
    /** Writes what is left. */
    flush,
  };
}

/**
 * Passes entries through while writing each as a JSON line into `spool`, so a stream that is costly to
 * produce is produced once and read back with {@link readSpooledEntries}.
 */
export async function* spoolEntries(
  entries: AsyncIterable<ManifestEntry>,
  spool: Spool,
): AsyncGenerator<ManifestEntry> {
  const writer = createLineWriter(spool);
  for await (const entry of entries) {
    await writer.add(entry);
    yield entry;
  }
  await writer.flush();
}

/** The values {@link createLineWriter} wrote, in order; the file is the driver's own, written by it. */
export async function* readSpooledLines<T>(source: AsyncIterable<Uint8Array>): AsyncGenerator<T> {
  const refuse = (reason: string) => new Error(`spooled lines are damaged: ${reason}`);
  for await (const line of splitRecords(source, {
    separator: 0x0a,
    maxBytes: MAX_LINE_BYTES,
    terminated: true,
    refuse,
  })) {
    yield JSON.parse(line.toString("utf8")) as T;
  }
}

/** The entries {@link spoolEntries} wrote, in order. */
export function readSpooledEntries(
  source: AsyncIterable<Uint8Array>,
): AsyncGenerator<ManifestEntry> {
  return readSpooledLines<ManifestEntry>(source);
}
