import { Readable } from "node:stream";
import type { ManifestEntry } from "./manifest.js";
import type { Spool } from "./spool.js";
import { splitRecords } from "./split-records.js";

/** Lines written to the spool at a time. */
const CHUNK_LINES = 2048;
/** Longest line (a path and a link target of 4096 bytes each, with fields). */
const MAX_LINE_BYTES = 16 * 1024;

/**
 * Passes entries through while writing each as a JSON line into `spool` (the driver's own temporary file),
 * so a stream that is costly to produce is produced once and read back with {@link readSpooledEntries}.
 */
export async function* spoolEntries(entries: AsyncIterable<ManifestEntry>, spool: Spool): AsyncGenerator<ManifestEntry> {
  let lines: string[] = [];
  const flush = async () => {
    if (lines.length === 0) return;
    const chunk = Buffer.from(`${lines.join("\n")}\n`);
    lines = [];
    await spool.append(Readable.toWeb(Readable.from([chunk])) as ReadableStream<Uint8Array>);
  };
  for await (const entry of entries) {
    lines.push(JSON.stringify(entry));
    if (lines.length >= CHUNK_LINES) await flush();
    yield entry;
  }
  await flush();
}

/** The entries {@link spoolEntries} wrote, in order; the file is the driver's own, written by it. */
export async function* readSpooledEntries(source: AsyncIterable<Uint8Array>): AsyncGenerator<ManifestEntry> {
  const refuse = (reason: string) => new Error(`spooled entries are damaged: ${reason}`);
  for await (const line of splitRecords(source, { separator: 0x0a, maxBytes: MAX_LINE_BYTES, terminated: true, refuse })) {
    yield JSON.parse(line.toString("utf8")) as ManifestEntry;
  }
}
