import { Readable } from "node:stream";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { manifestKeyOf } from "./blob-keys.js";
import { type LatestManifest, publishLatest } from "./latest-manifest.js";
import { type PackLocation, fileEntry } from "./manifest.js";
import { type ManifestItem, encodeManifestLines } from "./manifest-lines.js";
import { type Spool, createSpool } from "./spool.js";

/** A manifest written to a spool, not yet stored. */
export interface WrittenManifest {
  /** Where its bytes wait to be stored. */
  readonly spool: Pick<Spool, "read" | "dispose">;
  readonly digest: { readonly sha256: string; readonly size: number };
}

/** Writes a checkpoint's manifest to a spool, then stores it and points the session's latest hint at it. */
export function createManifestWriter(options: {
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly spool: { readonly maxBytes: number; readonly directory?: string };
}) {
  const { store, keyPrefix } = options;
  return {
    /**
     * Writes the manifest of `entries` (each file at its location; one that has a location keeps it) to a
     * spool, after `header` (a delta's).
     */
    async write(
      entries: AsyncIterable<ManifestItem>,
      locate: (sha256: string) => PackLocation | null,
      header?: string,
    ): Promise<WrittenManifest> {
      async function* located(): AsyncGenerator<ManifestItem> {
        for await (const entry of entries) {
          if (entry.type !== "file" || entry.size === 0 || entry.location) {
            yield entry;
            continue;
          }
          const location = locate(entry.sha256);
          yield location ? fileEntry(entry, entry.sha256, location) : entry;
        }
      }
      const spool = await createSpool(options.spool);
      try {
        await spool.append(
          Readable.toWeb(
            Readable.from(encodeManifestLines(located(), header)),
          ) as ReadableStream<Uint8Array>,
        );
        return { spool, digest: await spool.finish() };
      } catch (error) {
        await spool.dispose();
        throw error;
      }
    },

    /**
     * Stores a written manifest (and disposes of its spool), then points the session's latest-manifest hint
     * at it. Published last: before the put no manifest references the new contents, so nothing is visible.
     */
    async publish(
      session: string,
      written: WrittenManifest,
      pass: string,
      delta?: true,
    ): Promise<LatestManifest> {
      const { spool, digest } = written;
      try {
        await store.put(manifestKeyOf(keyPrefix, session, digest.sha256), spool.read(), {
          contentType: "application/x-ndjson",
          ifNoneMatch: "*",
          contentLength: digest.size,
        });
      } finally {
        await spool.dispose();
      }
      // Only a hint for later drivers: failing to record it costs them a transfer, not this checkpoint.
      const latest = {
        sha256: digest.sha256,
        size: digest.size,
        pass,
        ...(delta ? { delta } : {}),
      };
      await publishLatest(store, keyPrefix, session, latest).catch(() => undefined);
      return latest;
    },
  };
}
