import { Readable } from "node:stream";
import { type ManifestItem, MANIFEST_V3_HEADER, createManifestLineEncoder } from "./manifest-lines.js";
import type { WrittenManifest } from "./manifest-writer.js";
import { createSpool } from "./spool.js";
import { createStoredContentsBuilder } from "./stored-contents.js";

/** Lines gathered before they are written to the spool as one chunk. */
const CHUNK_LINES = 2048;

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
 * workspace but the compact set of the contents it names.
 */
export async function createManifestSink(spoolOptions: { readonly maxBytes: number; readonly directory?: string }): Promise<ManifestSink> {
  const spool = await createSpool(spoolOptions);
  const encoder = createManifestLineEncoder();
  const named = createStoredContentsBuilder();
  let lines: string[] = [MANIFEST_V3_HEADER.slice(0, -1)];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  const write = () => {
    const chunk = Buffer.from(`${lines.join("\n")}\n`);
    lines = [];
    writing = writing
      .then(() => spool.append(Readable.toWeb(Readable.from([chunk])) as ReadableStream<Uint8Array>))
      .catch((error: unknown) => void (failure ??= error));
  };
  return {
    add(item) {
      if (item.type === "file" && item.size > 0) named.add(item.sha256, item.location ?? null);
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
      return { spool, digest: await spool.finish(), named: named.build() };
    },
    dispose: () => spool.dispose(),
  };
}
