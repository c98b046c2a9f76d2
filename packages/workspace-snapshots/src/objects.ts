import { createHash } from "node:crypto";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import { isKeptMode } from "@open-managed-agents/workspace-archive";
import * as z from "zod";
import { HEX32, HEX64 } from "./keys.js";

/** The format every object states; an object of any other version is refused. */
export const FORMAT_VERSION = 1;

/** `<seconds>.<nine digits>`: an mtime as the sandbox lists it, to the nanosecond. */
const mtime = z.string().regex(/^-?\d{1,12}\.\d{9}$/);
const hex = z.string().regex(HEX64);
const name = z
  .string()
  .min(1)
  .refine(
    (value) => value !== "." && value !== ".." && !value.includes("/") && !value.includes("\0"),
  );
const mode = z.number().int().refine(isKeptMode);
const size = z.number().int().nonnegative().refine(Number.isSafeInteger);

const fileEntry = z
  .object({
    name,
    type: z.literal("file"),
    mode,
    mtime,
    size,
    /** SHA-256 of the content; absent only for an empty file. */
    hash: hex.optional(),
    /** The pack that holds the content, and where in it; absent for a blob (or an empty file). */
    pack: z.string().regex(HEX32).optional(),
    offset: size.optional(),
    /** Files of one snapshot with the same `link` are one file (hard links). */
    link: z
      .string()
      .regex(/^\d{1,20}$/)
      .optional(),
  })
  .strict();
/** A file entry's own rules: a hash exactly when it has bytes; a pack and an offset together or neither. */
const fileEntryHolds = (entry: z.infer<typeof fileEntry>) =>
  (entry.size === 0) === (entry.hash === undefined) &&
  (entry.pack === undefined) === (entry.offset === undefined);
const dirEntry = z.object({ name, type: z.literal("dir"), mode, mtime, tree: hex }).strict();
const symlinkEntry = z
  .object({ name, type: z.literal("symlink"), mtime, target: z.string().min(1) })
  .strict();

const treeEntrySchema = z.union([fileEntry, dirEntry, symlinkEntry]);
export type TreeEntry = z.infer<typeof treeEntrySchema>;
export type FileEntry = Extract<TreeEntry, { type: "file" }>;

// The file entries' rules are checked in one pass over a tree's entries: a refinement on each entry costs
// more than all the rest of its parse.
const treeEntries = z
  .array(treeEntrySchema)
  .refine((entries) => entries.every((entry) => entry.type !== "file" || fileEntryHolds(entry)));

export const treeSchema = z.union([
  z.object({ version: z.literal(FORMAT_VERSION), entries: treeEntries }).strict(),
  z.object({ version: z.literal(FORMAT_VERSION), chunks: z.array(hex).min(2) }).strict(),
]);
export type TreeObject = z.infer<typeof treeSchema>;

export const snapshotSchema = z
  .object({
    version: z.literal(FORMAT_VERSION),
    session: z.string().regex(HEX32),
    tree: hex,
    parent: hex.nullable(),
    created: z.string().datetime(),
    /** What made the snapshot: free text chosen by the caller (a sandbox id, a reason). */
    source: z.record(z.string().max(64), z.string().max(256)),
    entries: size,
  })
  .strict();
export type SnapshotObject = z.infer<typeof snapshotSchema>;

/** Bytes of an object as stored: JSON whose keys come in the order the objects above are built in. */
export function encodeObject(value: TreeObject | SnapshotObject): {
  readonly bytes: Buffer;
  readonly hash: string;
} {
  const bytes = Buffer.from(JSON.stringify(value), "utf8");
  return { bytes, hash: createHash("sha256").update(bytes).digest("hex") };
}

/** Tree entries compare as their names followed by `/`, bytewise: the order of the sandbox's sorted listing. */
export function compareNames(left: string, right: string): number {
  const a = `${left}/`;
  const b = `${right}/`;
  // Below the surrogates, UTF-16 code units compare as UTF-8 bytes do: most names need no encoding.
  if (!SURROGATES_AND_ABOVE.test(a) && !SURROGATES_AND_ABOVE.test(b))
    return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
const SURROGATES_AND_ABOVE = /[\ud800-\uffff]/;

/** A stored object's bytes checked against the hash its key names, then parsed. */
export function decodeObject<T>(
  schema: z.ZodType<T>,
  bytes: Uint8Array,
  hash: string,
  what: string,
): T {
  const digest = createHash("sha256").update(bytes).digest("hex");
  if (digest !== hash) {
    throw new IntegrityError({
      message: `snapshot ${what} ${hash} does not match its hash`,
      context: { object: what, hash },
    });
  }
  let parsed: z.ZodSafeParseResult<T>;
  try {
    parsed = schema.safeParse(JSON.parse(Buffer.from(bytes).toString("utf8")));
  } catch {
    parsed = { success: false } as z.ZodSafeParseResult<T>;
  }
  if (!parsed.success) {
    throw new IntegrityError({
      message: `snapshot ${what} ${hash} is malformed`,
      context: { object: what, hash },
    });
  }
  return parsed.data;
}

/** Refuses a tree chunk whose entries are not strictly in {@link compareNames} order. */
export function checkEntryOrder(
  entries: readonly TreeEntry[],
  previous: string | null,
  hash: string,
): string | null {
  let last = previous;
  for (const entry of entries) {
    if (last !== null && compareNames(last, entry.name) >= 0) {
      throw new IntegrityError({
        message: `snapshot tree ${hash} lists its entries out of order`,
        context: { object: "tree", hash },
      });
    }
    last = entry.name;
  }
  return last;
}
