import { Readable } from "node:stream";
import { createBufferedSpool } from "./buffered-spool.js";
import { type ManifestItem, MANIFEST_V3_HEADER, createManifestLineEncoder } from "./manifest-lines.js";
import type { WrittenManifest } from "./manifest-writer.js";

/**
 * Lines gathered before they are written to the spool as one chunk, encoded in place: well under 128 KiB, so
 * the joined text is an ordinary young object (a larger one goes to the large-object space, which only a full
 * collection frees: hundreds of them piled up as old-generation garbage).
 */
const CHUNK_LINES = 256;

/** A manifest written item by item as a checkpoint produces them (see {@link createManifestSink}). */
export interface ManifestSink {
  /** Encodes one item (in manifest order); its lines reach the spool with the next chunk. */
  add(item: ManifestItem): void;
  /** Waits while written chunks are still on their way to the spool: call it between batches of {@link add}. */
  flushed(): Promise<void>;
  /** Writes the rest and closes the spool; the caller publishes or disposes the result. */
  finish(): Promise<WrittenManifest>;
  /** Deletes the spool (after a failure before {@link finish}). */
  dispose(): Promise<void>;
}

/**
 * A /3 manifest written to a spool as its items arrive, for a checkpoint that learns the workspace as it
 * streams rather than from a listing read beforehand. Lines go to disk in chunks; nothing grows with the
 * workspace.
 */
export async function createManifestSink(spoolOptions: { readonly maxBytes: number; readonly directory?: string }): Promise<ManifestSink> {
  const spool = await createBufferedSpool({ ...spoolOptions, hash: true });
  const encoder = createManifestLineEncoder();
  let lines: string[] = [MANIFEST_V3_HEADER.slice(0, -1)];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  // Lines are encoded straight into the spool's staging buffer, a chunk at a time, in order.
  const write = () => {
    const text = `${lines.join("\n")}\n`;
    lines = [];
    writing = writing.then(() => spool.writeText(text)).catch((error: unknown) => void (failure ??= error));
  };
  return {
    add(item) {
      for (const line of encoder.encode(item)) lines.push(line);
      if (lines.length >= CHUNK_LINES) write();
    },
    async flushed() {
      await writing;
      if (failure) throw failure;
    },
    async finish() {
      if (lines.length > 0) write();
      await writing;
      if (failure) throw failure;
      const size = await spool.finish();
      return {
        spool: { read: () => Readable.toWeb(spool.read() as Readable) as ReadableStream<Uint8Array>, dispose: () => spool.dispose() },
        digest: { sha256: spool.sha256(), size },
      };
    },
    dispose: () => spool.dispose(),
  };
}
