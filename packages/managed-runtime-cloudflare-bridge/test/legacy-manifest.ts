import { createHash } from "node:crypto";
import type { ManifestEntry, PackRef } from "../src/checkpoint/manifest.js";

/**
 * Writes a manifest in the earlier one-document format /2 (packs listed by first use), as drivers before
 * the streamed format /3 stored them: the bytes older handles name, so tests prove those still restore.
 */
export function encodeManifestV2(entries: readonly ManifestEntry[]): {
  readonly bytes: Uint8Array;
  readonly sha256: string;
} {
  const packs = new Map<string, { index: number; ref: PackRef }>();
  const sorted = [...entries].sort((left, right) =>
    left.path < right.path ? -1 : left.path > right.path ? 1 : 0,
  );
  const wire = sorted.map((entry) => {
    if (entry.type !== "file" || !entry.location) return entry;
    const { location, ...plain } = entry;
    let pack = packs.get(location.pack.sha256);
    if (!pack)
      packs.set(
        location.pack.sha256,
        (pack = {
          index: packs.size,
          ref: { sha256: location.pack.sha256, size: location.pack.size },
        }),
      );
    return { ...plain, pack: pack.index, offset: location.offset };
  });
  const bytes = new TextEncoder().encode(
    JSON.stringify({
      format: "oma-workspace-manifest/2",
      packs: [...packs.values()].map(({ ref }) => ref),
      entries: wire,
    }),
  );
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}
