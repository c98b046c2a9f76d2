import {
  ArchiveRejectedError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { isUtf8Name, keptMode, nameProblem } from "@open-managed-agents/workspace-archive";
import { MAX_PATH_BYTES, invalidName, nameTooLong, unreadableEntry } from "./capture-refusals.js";
import { type ManifestEntry, type ManifestFile, fileEntry } from "./manifest.js";
import { splitRecords } from "./split-records.js";

/** Longest record the sandbox may report (a path and a link target of 4096 bytes each, with fields). */
const MAX_RECORD_BYTES = 16 * 1024;
const SEPARATOR = Buffer.from("//");
const TYPES: Readonly<Record<string, ManifestEntry["type"]>> = {
  f: "file",
  d: "directory",
  l: "symlink",
};

/** A listed file with no hash in a pass that used cached hashes: the cache missed it, so hash everything. */
export class HashMissing extends Error {
  constructor() {
    super("a listed file has no hash");
  }
}

/** What the listing says of a path before its hash is joined in. */
export type ListedEntry =
  | Exclude<ManifestEntry, ManifestFile>
  | Omit<ManifestFile, "sha256" | "location">;

/** The records of one path: its entry and its hash, either possibly absent. */
export interface RecordGroup {
  /** The path's bytes and `//`: the manifest's sort key. */
  readonly key: Buffer;
  /** Its `e` record: absent for a hash the cache still holds of a path no longer listed. */
  readonly entry?: ListedEntry;
  /** Its `h` record: absent for anything but a regular file (or one removed before it was hashed). */
  readonly sha256?: string;
}

/** What a path's records say, without its key: what a merge of the records hands on for each path it touches. */
export type PathRecords = Pick<RecordGroup, "entry" | "sha256">;

/**
 * Reads the sandbox's records as they arrive: NUL-terminated, `LC_ALL=C`-sorted, each `<path>//e<%y %m %s
 * %T@ %l>` for an entry or `<path>//h<sha256>` for a regular file's hash (which sorts right after its
 * entry), and yields them grouped by path, in order. Devices, FIFOs and sockets are refused
 * (`archive_rejected`). A malformed record is `sandbox_failed`, or {@link HashMissing} when `cached` (the
 * hashes came partly from an earlier pass, whose cache may be garbage).
 */
export async function* recordGroups(
  source: AsyncIterable<Uint8Array>,
  cached: boolean,
): AsyncGenerator<RecordGroup> {
  const malformed = (reason: string) =>
    cached
      ? new HashMissing()
      : new SandboxFailedError({
          message: `the sandbox reported a malformed workspace listing (${reason})`,
        });
  let group: { key: Buffer; entry?: ListedEntry; sha256?: string } | null = null;
  for await (const record of splitRecords(source, {
    separator: 0,
    maxBytes: MAX_RECORD_BYTES,
    terminated: true,
    refuse: malformed,
  })) {
    const cut = record.indexOf(SEPARATOR);
    const tag = cut === -1 ? undefined : record[cut + 2];
    if (tag !== 0x65 /* e */ && tag !== 0x68 /* h */) throw malformed("record");
    const key = record.subarray(0, cut + 2);
    if (!group?.key.equals(key)) {
      if (group) {
        if (Buffer.compare(group.key, key) >= 0) throw malformed("order");
        yield group;
      }
      group = { key: Buffer.from(key) };
    }
    if (tag === 0x68) {
      const digest = record.subarray(cut + 3).toString("latin1");
      if (!/^[0-9a-f]{64}$/.test(digest) || group.sha256 !== undefined) throw malformed("hash");
      group.sha256 = digest;
      continue;
    }
    if (group.entry !== undefined || group.sha256 !== undefined) throw malformed("order");
    group.entry = parseEntry(record.subarray(0, cut), record.subarray(cut + 3), malformed);
  }
  if (group) yield group;
}

/**
 * The entries of the sandbox's records, in manifest order. A file without a hash vanished or could not be
 * read between listing and hashing: `sandbox_failed` naming it (never left out), or {@link HashMissing}
 * when `cached` (the cache may have missed it; everything is hashed again).
 */
export async function* parseSandboxRecords(
  source: AsyncIterable<Uint8Array>,
  cached: boolean,
): AsyncGenerator<ManifestEntry> {
  for await (const { entry, sha256 } of recordGroups(source, cached)) {
    if (!entry) continue; // a hash of a path no longer listed: the cache's leftover
    if (entry.type !== "file") yield entry;
    else if (sha256 !== undefined) yield fileEntry(entry, sha256);
    else if (cached) throw new HashMissing();
    else
      throw unreadableEntry(
        entry.path,
        "it vanished or could not be read when its content was hashed",
      );
  }
}

/**
 * One `e` record's entry. Its path and link target are held as the bytes the sandbox has: not UTF-8 (the
 * text would name another file), too long to read, or a mode outside the policy is dealt with here.
 */
function parseEntry(
  pathBytes: Buffer,
  fieldBytes: Buffer,
  malformed: (reason: string) => Error,
): ListedEntry {
  const path = pathBytes.toString("utf8");
  if (!isUtf8Name(pathBytes)) throw invalidName(path, "the name is not valid UTF-8");
  if (pathBytes.byteLength > MAX_PATH_BYTES) throw nameTooLong(path);
  const fields = fieldBytes.toString("utf8");
  const match = /^(\w) (\d+) (\d+) (\d+)(?:\.\d+)? (.*)$/s.exec(fields);
  if (!match) throw malformed("entry");
  const [, kind = "", octal = "0", size = "0", seconds = "0", target = ""] = match;
  const type = TYPES[kind];
  if (!type)
    throw new ArchiveRejectedError({
      message: `workspace entry ${JSON.stringify(path)} is a special file (${kind})`,
      context: { entry: path, reason: "unsupported_type" },
    });
  const base = { path, mode: keptMode(Number.parseInt(octal, 8)), mtime: Number(seconds) };
  if (type === "directory") return { type, ...base };
  if (type === "symlink") {
    if (!isUtf8Name(fieldBytes) || nameProblem(target) !== null)
      throw invalidName(path, "the symlink target is not valid UTF-8");
    return { type, ...base, target };
  }
  return { type, ...base, size: Number(size) };
}
