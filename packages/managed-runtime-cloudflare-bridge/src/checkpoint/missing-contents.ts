import { Readable } from "node:stream";
import type { ManifestFile } from "./manifest.js";
import { type Spool, createSpool } from "./spool.js";
import { readSpooledEntries } from "./spooled-entries.js";

/** Files written to the spool at a time. */
const CHUNK_FILES = 2048;

/** The contents a checkpoint must send (one file per content), spooled on the driver's disk. */
export interface MissingContents {
  /** How many contents. */
  readonly count: number;
  /** Their bytes in all. */
  readonly bytes: number;
  /** The files in the order they were added, read afresh from the spool on each call. */
  files(): AsyncIterable<ManifestFile>;
  /** Deletes the spool. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Collects the files to send as JSON lines in a spool rather than in memory: a first checkpoint sends every
 * file of the workspace, and the list is read twice (the paths for the sandbox, then the sizes to slice the
 * concatenation by), never held whole.
 */
export async function collectMissingContents(options: {
  readonly maxBytes: number;
  readonly directory?: string;
}) {
  const spool: Spool = await createSpool(options);
  let lines: string[] = [];
  let count = 0;
  let bytes = 0;
  const flush = async () => {
    if (lines.length === 0) return;
    const chunk = Buffer.from(`${lines.join("\n")}\n`);
    lines = [];
    await spool.append(Readable.toWeb(Readable.from([chunk])) as ReadableStream<Uint8Array>);
  };
  return {
    /** Adds a file (synchronously, so concurrent callers may add); {@link flushed} writes them out. */
    add(file: ManifestFile): void {
      lines.push(
        JSON.stringify({
          type: file.type,
          path: file.path,
          mode: file.mode,
          mtime: file.mtime,
          size: file.size,
          sha256: file.sha256,
        }),
      );
      count += 1;
      bytes += file.size;
    },
    /** Writes the added files to the spool once enough are waiting. */
    async flushed(): Promise<void> {
      if (lines.length >= CHUNK_FILES) await flush();
    },
    /** Writes the rest and returns the collection; the caller disposes it. */
    async finish(): Promise<MissingContents> {
      await flush();
      await spool.finish();
      const total = { count, bytes };
      return {
        ...total,
        async *files() {
          for await (const entry of readSpooledEntries(
            spool.read() as unknown as AsyncIterable<Uint8Array>,
          ))
            yield entry as ManifestFile;
        },
        dispose: () => spool.dispose(),
      };
    },
    /** Deletes the spool (after a failure before {@link finish}). */
    dispose: () => spool.dispose(),
  };
}
