import { IntegrityError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { KEPT_MODE_BITS, nameProblem } from "@open-managed-agents/workspace-archive";
import * as z from "zod";

/** Format tag of an incremental checkpoint's manifest whose contents are each one blob. */
export const MANIFEST_FORMAT_V1 = "oma-workspace-manifest/1";
/** Format tag of a manifest (one JSON document) that may place small contents in shared pack objects. */
export const MANIFEST_FORMAT = "oma-workspace-manifest/2";

/** A workspace-relative path as manifests hold it. */
export const relativePath = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (value) => !value.startsWith("/") && nameProblem(value) === null,
    "must be relative, with no NUL and no unpaired surrogate (tar writes bytes)",
  )
  .refine(
    (value) =>
      value.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."),
    "must not contain empty, '.' or '..' segments",
  );
/** Permission and sticky bits only (at most 0o1777: no setuid, setgid or type bit), the one mode policy (`keptMode`). */
const mode = z.number().int().min(0).max(KEPT_MODE_BITS);
const mtime = z
  .number()
  .int()
  .min(0)
  .max(2 ** 33);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const byteCount = z.number().int().nonnegative().refine(Number.isSafeInteger);

const fileFields = {
  type: z.literal("file"),
  path: relativePath,
  mode,
  mtime,
  size: byteCount,
  sha256,
};
const directorySchema = z
  .object({ type: z.literal("directory"), path: relativePath, mode, mtime })
  .strict();
const linkTarget = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (value) => nameProblem(value) === null,
    "must be a target tar writes as the same bytes: no NUL, no unpaired surrogate",
  );
const symlinkSchema = z
  .object({ type: z.literal("symlink"), path: relativePath, mode, mtime, target: linkTarget })
  .strict();
const entrySchema = z.discriminatedUnion("type", [
  directorySchema,
  z.object(fileFields).strict(),
  symlinkSchema,
]);
/** An entry as /2 and /3 manifests store it; on the wire a packed file names its pack by index into the manifest's pack table. */
export const wireEntrySchema = z.discriminatedUnion("type", [
  directorySchema,
  z
    .object({
      ...fileFields,
      pack: z.number().int().nonnegative().optional(),
      offset: byteCount.optional(),
    })
    .strict(),
  symlinkSchema,
]);
/** A pack as a manifest names it. */
export const packSchema = z
  .object({ sha256, size: byteCount.refine((value) => value > 0) })
  .strict();

const manifestSchema = z.discriminatedUnion("format", [
  z.object({ format: z.literal(MANIFEST_FORMAT_V1), entries: z.array(entrySchema) }).strict(),
  z
    .object({
      format: z.literal(MANIFEST_FORMAT),
      packs: z.array(packSchema),
      entries: z.array(wireEntrySchema),
    })
    .strict(),
]);

/** A stored pack object: small contents concatenated, named by the sha256 of the whole. */
export interface PackRef {
  readonly sha256: string;
  readonly size: number;
}
/** Where a packed content lies: its pack and the offset of its first byte there. */
export interface PackLocation {
  readonly pack: PackRef;
  readonly offset: number;
}

type PlainEntry = z.output<typeof entrySchema>;
/** A regular file entry; a packed one carries its location, any other lives in a blob of its own (or is empty). */
export type ManifestFile = Extract<PlainEntry, { type: "file" }> & {
  readonly location?: PackLocation;
};
/** One path of a workspace: a folder, a regular file (by content hash) or a symlink. */
export type ManifestEntry = Exclude<PlainEntry, { type: "file" }> | ManifestFile;
/** An earlier (/1, /2) manifest: a list of entries, sorted by path. */
/**
 * A file entry built field by field, with `sha256` and, when given, `location`. Spreading an entry into a new
 * object (`{ ...entry, location }`) made V8 (Node 20) allocate the copy where young collections do not free
 * it: one spread per line of a 200,000-entry manifest left 50 MiB of old-generation garbage, where building
 * the object left none.
 */
export function fileEntry(
  file: Pick<ManifestFile, "path" | "mode" | "mtime" | "size">,
  sha256: string,
  location?: PackLocation,
): ManifestFile {
  if (location === undefined)
    return {
      type: "file",
      path: file.path,
      mode: file.mode,
      mtime: file.mtime,
      size: file.size,
      sha256,
    };
  return {
    type: "file",
    path: file.path,
    mode: file.mode,
    mtime: file.mtime,
    size: file.size,
    sha256,
    location,
  };
}

export interface WorkspaceManifest {
  readonly format: typeof MANIFEST_FORMAT | typeof MANIFEST_FORMAT_V1;
  readonly entries: readonly ManifestEntry[];
}

/** Parses the bytes of an earlier (/1, /2) manifest after their hash was checked; a malformed manifest is `integrity_failed`. */
export function decodeManifest(bytes: Uint8Array): WorkspaceManifest {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new IntegrityError({ message: "checkpoint manifest is not JSON", cause: error });
  }
  const manifest = parseRecord(manifestSchema, json, {
    record: "checkpoint manifest",
    code: "integrity_failed",
  });
  const seen = new Set<string>();
  for (const entry of manifest.entries) {
    if (seen.has(entry.path))
      throw new IntegrityError({
        message: "checkpoint manifest lists a path twice",
        context: { path: entry.path.slice(0, 256) },
      });
    seen.add(entry.path);
  }
  if (manifest.format === MANIFEST_FORMAT_V1) return manifest;
  const packs = manifest.packs;
  const entries = manifest.entries.map((entry): ManifestEntry => {
    if (entry.type !== "file" || (entry.pack === undefined && entry.offset === undefined))
      return entry;
    const { pack: index, offset } = entry;
    const pack = index === undefined ? undefined : packs[index];
    if (!pack || offset === undefined || offset + entry.size > pack.size) {
      throw new IntegrityError({
        message: "checkpoint manifest places a file outside its pack",
        context: { path: entry.path.slice(0, 256) },
      });
    }
    return fileEntry(entry, entry.sha256, { pack, offset });
  });
  return { format: manifest.format, entries };
}
