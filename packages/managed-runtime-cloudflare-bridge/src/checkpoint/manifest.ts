import { createHash } from "node:crypto";
import { ArchiveRejectedError, IntegrityError, SandboxFailedError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** Format tag of an incremental checkpoint's manifest. */
export const MANIFEST_FORMAT = "oma-workspace-manifest/1";

const relativePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => !value.startsWith("/") && !value.includes("\0"), "must be relative, without NUL")
  .refine((value) => value.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."), "must not contain empty, '.' or '..' segments");
const mode = z.number().int().min(0).max(0o7777);
const mtime = z.number().int().min(0).max(2 ** 33);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

const entrySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("directory"), path: relativePath, mode, mtime }).strict(),
  z.object({ type: z.literal("file"), path: relativePath, mode, mtime, size: z.number().int().nonnegative().refine(Number.isSafeInteger), sha256 }).strict(),
  z.object({ type: z.literal("symlink"), path: relativePath, mode, mtime, target: z.string().min(1).max(4096) }).strict(),
]);

const manifestSchema = z.object({ format: z.literal(MANIFEST_FORMAT), entries: z.array(entrySchema) }).strict();

/** One path of a workspace: a folder, a regular file (by content hash) or a symlink. */
export type ManifestEntry = z.output<typeof entrySchema>;
/** A file entry. */
export type ManifestFile = Extract<ManifestEntry, { type: "file" }>;
/** A workspace as a list of entries, sorted by path; a parent always precedes its children. */
export interface WorkspaceManifest {
  readonly format: typeof MANIFEST_FORMAT;
  readonly entries: readonly ManifestEntry[];
}

/** Entries in manifest order: by path, so a parent always precedes its children. */
export function sortEntries(entries: readonly ManifestEntry[]): ManifestEntry[] {
  return [...entries].sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
}

/** The canonical bytes of a manifest and their sha256 (the checkpoint id). */
export function encodeManifest(entries: readonly ManifestEntry[]): { readonly bytes: Uint8Array; readonly sha256: string } {
  const sorted = sortEntries(entries);
  const bytes = new TextEncoder().encode(JSON.stringify({ format: MANIFEST_FORMAT, entries: sorted }));
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Parses stored manifest bytes after their hash was checked; a malformed manifest is `integrity_failed`. */
export function decodeManifest(bytes: Uint8Array): WorkspaceManifest {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new IntegrityError({ message: "checkpoint manifest is not JSON", cause: error });
  }
  const manifest = parseRecord(manifestSchema, json, { record: "checkpoint manifest", code: "integrity_failed" });
  const seen = new Set<string>();
  for (const entry of manifest.entries) {
    if (seen.has(entry.path)) throw new IntegrityError({ message: "checkpoint manifest lists a path twice", context: { path: entry.path.slice(0, 256) } });
    seen.add(entry.path);
  }
  return manifest;
}

const TYPES: Readonly<Record<string, ManifestEntry["type"]>> = { f: "file", d: "directory", l: "symlink" };

/**
 * Builds manifest entries from what the sandbox reported: `find -printf '%y %m %s %T@ %P\0%l\0'` records
 * and `sha256sum -z` lines. Devices, FIFOs and sockets are refused (`archive_rejected`), as a restore
 * would refuse them.
 */
export function entriesFromSandbox(listing: Uint8Array, hashes: Uint8Array): ManifestEntry[] {
  const digests = new Map<string, string>();
  for (const line of splitNul(hashes)) {
    const match = /^([0-9a-f]{64}) [ *]\.\/(.+)$/s.exec(line);
    if (!match) throw new SandboxFailedError({ message: "the sandbox reported a malformed file hash" });
    digests.set(match[2] as string, match[1] as string);
  }
  const fields = splitNul(listing);
  const entries: ManifestEntry[] = [];
  for (let index = 0; index < fields.length; index += 2) {
    const match = /^(\w) (\d+) (\d+) (\d+)(?:\.\d+)? (.+)$/s.exec(fields[index] as string);
    if (!match) throw new SandboxFailedError({ message: "the sandbox reported a malformed workspace listing" });
    const [, kind = "", octal = "0", size = "0", seconds = "0", path = ""] = match;
    const type = TYPES[kind];
    if (!type) throw new ArchiveRejectedError({ message: `workspace entry ${JSON.stringify(path)} is a special file (${kind})`, context: { entry: path, reason: "unsupported_type" } });
    const base = { path, mode: Number.parseInt(octal, 8), mtime: Number(seconds) };
    if (type === "directory") entries.push({ type, ...base });
    else if (type === "symlink") entries.push({ type, ...base, target: fields[index + 1] ?? "" });
    else {
      const digest = digests.get(path);
      // A file removed between the listing and the hashing is simply not part of the checkpoint.
      if (digest) entries.push({ type, ...base, size: Number(size), sha256: digest });
    }
  }
  return entries;
}

function splitNul(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  const parts = text.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
