import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { ManifestEntry } from "./manifest.js";
import { type ManifestItem, decodeManifestItems } from "./manifest-lines.js";
import { comparePaths } from "./split-records.js";

/**
 * Format tag of a delta manifest: /3 lines over a base /3 manifest of the same session, each line an entry
 * that replaces or adds to the base's or a path the base loses. A workspace is the base with its delta
 * laid over; the delta holds every change since the base (not since the previous checkpoint), so a
 * workspace is never more than two manifests deep.
 */
export const MANIFEST_FORMAT_V4 = "oma-workspace-manifest/4";
/** How every delta manifest begins, byte for byte, before its base's hash. */
export const MANIFEST_V4_PREFIX = `{"format":"${MANIFEST_FORMAT_V4}",`;

/** The base a delta manifest lies over: the base manifest's sha256 and size. */
export interface DeltaBase {
  readonly sha256: string;
  readonly size: number;
}

const headerSchema = z
  .object({
    format: z.literal(MANIFEST_FORMAT_V4),
    base: z.string().regex(/^[0-9a-f]{64}$/),
    baseSize: z.number().int().positive().refine(Number.isSafeInteger),
  })
  .strict();

/** The first line of a delta manifest over `base` (without its newline), fields always in the same order. */
export function deltaHeaderLine(base: DeltaBase): string {
  return JSON.stringify({ format: MANIFEST_FORMAT_V4, base: base.sha256, baseSize: base.size });
}

/** The base a delta manifest's first line names; a line that is no delta header is `integrity_failed`. */
export function parseDeltaHeader(line: string): DeltaBase {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    throw new IntegrityError({ message: "checkpoint manifest header is not JSON", cause: error });
  }
  const parsed = headerSchema.safeParse(json);
  if (
    !parsed.success ||
    deltaHeaderLine({ sha256: parsed.data.base, size: parsed.data.baseSize }) !== line
  ) {
    throw new IntegrityError({ message: "checkpoint manifest header is malformed" });
  }
  return { sha256: parsed.data.base, size: parsed.data.baseSize };
}

/** A delta manifest's items as its lines arrive, held to the same rules as /3 lines (removals allowed). */
export function decodeDeltaItems(source: AsyncIterable<Uint8Array>): AsyncGenerator<ManifestItem> {
  return decodeManifestItems(source, {
    header: (json) => headerSchema.safeParse(json).success,
    removals: true,
  });
}

/**
 * The workspace a delta describes: `base` and `delta` (both in `pathKey` order) merged as two sorted
 * streams. A delta entry replaces the base's at its path or adds one; a removal must name a path the base
 * holds, or the delta is `integrity_failed`.
 */
export async function* overlay(
  base: AsyncIterable<ManifestEntry>,
  delta: AsyncIterable<ManifestItem>,
): AsyncGenerator<ManifestEntry> {
  const under = base[Symbol.asyncIterator]();
  const over = delta[Symbol.asyncIterator]();
  try {
    let low = await under.next();
    let high = await over.next();
    while (!low.done || !high.done) {
      const order = low.done ? 1 : high.done ? -1 : comparePaths(low.value.path, high.value.path);
      if (order < 0 && !low.done) {
        yield low.value;
        low = await under.next();
        continue;
      }
      if (high.done) break;
      const item = high.value;
      if (item.type === "removed" && order !== 0)
        throw new IntegrityError({
          message: "checkpoint manifest removes a path its base does not hold",
          context: { path: item.path.slice(0, 256) },
        });
      if (item.type !== "removed") yield item;
      if (order === 0) low = await under.next();
      high = await over.next();
    }
  } finally {
    await Promise.allSettled([under.return?.(), over.return?.()]);
  }
}
