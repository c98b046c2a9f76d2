// The tree format's rules as a zod schema: the reference parseTree (src/objects.ts) is tested against, and the
// baseline of bench/tree-parse.bench.ts.
import { isKeptMode } from "@open-managed-agents/workspace-archive";
import * as z from "zod";
import { HEX32, HEX64 } from "../src/keys.js";
import { FORMAT_VERSION, LINK, MTIME } from "../src/objects.js";

const mtime = z.string().regex(MTIME);
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
    hash: hex.optional(),
    pack: z.string().regex(HEX32).optional(),
    offset: size.optional(),
    link: z.string().regex(LINK).optional(),
  })
  .strict()
  // A hash exactly when it has bytes; a pack and an offset together or neither.
  .refine(
    (entry) =>
      (entry.size === 0) === (entry.hash === undefined) &&
      (entry.pack === undefined) === (entry.offset === undefined),
  );
const dirEntry = z.object({ name, type: z.literal("dir"), mode, mtime, tree: hex }).strict();
const symlinkEntry = z
  .object({ name, type: z.literal("symlink"), mtime, target: z.string().min(1) })
  .strict();
const treeEntrySchema = z.union([fileEntry, dirEntry, symlinkEntry]);

export const treeSchema = z.union([
  z.object({ version: z.literal(FORMAT_VERSION), entries: z.array(treeEntrySchema) }).strict(),
  z.object({ version: z.literal(FORMAT_VERSION), chunks: z.array(hex).min(2) }).strict(),
]);
