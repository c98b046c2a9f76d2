import type { BlobStore } from "@open-managed-agents/blob-store";
import * as z from "zod";
import { latestKeyOf, manifestKeyOf, packKeyOf } from "./blob-keys.js";
import { createLimiter } from "./limiter.js";
import { MANIFEST_HANDLE_FORMAT } from "./manifest-handle.js";
import type { ManifestEntry } from "./manifest.js";
import { openManifest } from "./manifest-store.js";
import {
  NO_STORED_CONTENTS,
  type StoredContents,
  createStoredContentsBuilder,
} from "./stored-contents.js";

/** Store calls in flight while packs are checked. */
const PARALLEL_HEADS = 8;

const pointerSchema = z
  .object({
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.number().int().positive().refine(Number.isSafeInteger),
    pass: z.uuid().optional(),
    delta: z.literal(true).optional(),
  })
  .strict();

/** The session's latest published manifest, and the sandbox pass it was built from (absent after a restore or from older drivers). */
export interface LatestManifest {
  /** The manifest's sha256 (its handle id without the `sha256:` prefix). */
  readonly sha256: string;
  /** Its size in bytes. */
  readonly size: number;
  /** The id of the sandbox pass whose records it was built from. */
  readonly pass?: string;
  /** Whether it is a delta (/4) manifest: its base is then named in its first line. */
  readonly delta?: true;
}

/** Records the session's newest manifest, so a driver that never saw it (restarted, another process) finds it. */
export async function publishLatest(
  store: BlobStore,
  keyPrefix: string,
  session: string,
  manifest: LatestManifest,
): Promise<void> {
  const { sha256, size, pass, delta } = manifest;
  const bytes = new TextEncoder().encode(
    JSON.stringify({
      sha256,
      size,
      ...(pass === undefined ? {} : { pass }),
      ...(delta === undefined ? {} : { delta }),
    }),
  );
  await store.put(latestKeyOf(keyPrefix, session), bytes, {
    contentType: "application/json",
    contentLength: bytes.byteLength,
  });
}

/** The session's latest published manifest, as the pointer names it; null when there is none or it is unreadable. */
export async function latestManifest(
  store: BlobStore,
  keyPrefix: string,
  session: string,
): Promise<LatestManifest | null> {
  try {
    const object = await store.get(latestKeyOf(keyPrefix, session));
    if (!object) return null;
    const pointer = pointerSchema.safeParse(JSON.parse(await new Response(object.stream()).text()));
    if (!pointer.success) return null;
    const { sha256, size, pass, delta } = pointer.data;
    return {
      sha256,
      size,
      ...(pass === undefined ? {} : { pass }),
      ...(delta === undefined ? {} : { delta }),
    };
  } catch {
    return null;
  }
}

/**
 * Collects the packed contents of a manifest as its entries pass by, then keeps those whose packs are still
 * stored (a HEAD per pack), in a compact set: a manifest of any size costs no object per entry.
 */
export function createPackedContentsCollector(options: { readonly blobs?: boolean } = {}) {
  const contents = createStoredContentsBuilder();
  const packs = new Map<string, boolean>();
  return {
    /** Notes the entry's content when it lies in a pack (or, with `blobs`, in a blob of its own). */
    add(entry: ManifestEntry): void {
      if (entry.type !== "file" || entry.size === 0) return;
      if (!entry.location) {
        if (options.blobs) contents.add(entry.sha256, null);
        return;
      }
      packs.set(entry.location.pack.sha256, false);
      contents.add(entry.sha256, entry.location);
    },
    /** The collected contents whose packs the store still holds (blobs of their own as they were noted). */
    async resolve(store: BlobStore, keyPrefix: string, session: string): Promise<StoredContents> {
      const heads = createLimiter(PARALLEL_HEADS);
      for (const pack of packs.keys()) {
        await heads.run(
          async () =>
            void packs.set(pack, (await store.head(packKeyOf(keyPrefix, session, pack))) !== null),
        );
      }
      await heads.drain();
      const all = contents.build();
      return {
        size: all.size,
        get: (sha256) => {
          const location = all.get(sha256);
          if (location === null) return null;
          return location && packs.get(location.pack.sha256) ? location : undefined;
        },
      };
    },
  };
}

/**
 * The packed contents of the session's latest manifest (`known`, this driver's own since the last sweep, or the
 * one the pointer names) whose packs are still stored, by sha256, and with `known` its blobs as well. Anything unreadable (no pointer, a manifest swept or altered) yields nothing: the
 * contents are then sent again.
 */
export async function recallLatest(
  store: BlobStore,
  keyPrefix: string,
  session: string,
  known?: LatestManifest,
): Promise<StoredContents> {
  try {
    const pointer = known ?? (await latestManifest(store, keyPrefix, session));
    if (!pointer) return NO_STORED_CONTENTS;
    const { sha256, size } = pointer;
    const manifest = await openManifest(store, {
      format: MANIFEST_HANDLE_FORMAT,
      session,
      contentHash: `sha256:${sha256}`,
      size,
      manifestKey: manifestKeyOf(keyPrefix, session, sha256),
    });
    // A manifest this driver published or restored since the last sweep names blobs it saw stored; one found
    // through the pointer only lends its packs (checked), and a large content of its own is checked when sent.
    const collector = createPackedContentsCollector({ blobs: known !== undefined });
    for await (const entry of manifest.entries()) collector.add(entry);
    return await collector.resolve(store, keyPrefix, session);
  } catch {
    return NO_STORED_CONTENTS;
  }
}
