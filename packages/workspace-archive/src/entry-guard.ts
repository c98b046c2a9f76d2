import type { Header } from "tar-stream";
import {
  ancestorsOf,
  normalizeMemberName,
  parentOf,
  symlinkTargetStaysInside,
} from "./entry-name.js";
import { keptMode } from "./mode-policy.js";
import { nameProblem } from "./name-bytes.js";
import type { ResolvedReadOptions } from "./options.js";
import { limitExceeded, rejectEntry } from "./rejections.js";
import { type SymlinkLookup, symlinkResolvesInside } from "./symlink-resolution.js";

/** Kinds of entry an archive may hold. Devices, FIFOs and unknown types are refused. */
export type ArchiveEntryKind = "directory" | "file" | "symlink" | "hardlink";

/** An entry that passed every check, with its name normalized to a root-relative path (`""` = root). */
export interface AdmittedEntry {
  readonly kind: ArchiveEntryKind;
  /** The member name as stored in the archive. */
  readonly name: string;
  /** Root-relative path without `./`; `""` for the root directory. */
  readonly path: string;
  /** Permission bits and the sticky bit (setuid and setgid removed; see `keptMode`). */
  readonly mode: number;
  /** Modification time in whole seconds since the epoch. */
  readonly mtime: number;
  /** Body size; 0 for everything but files. */
  readonly size: number;
  /** Symlink target as stored, or the root-relative path a hardlink points to. */
  readonly linkTarget: string | null;
}

/**
 * Checks entries one at a time against the limits and the path rules, and remembers the symlinks seen
 * so far so that no later entry is written through one. {@link verifySymlinks} runs the full
 * resolution once the archive has been read.
 */
export class EntryGuard {
  readonly symlinks = new Map<string, string>();
  entries = 0;
  bytes = 0;

  constructor(private readonly options: ResolvedReadOptions) {}

  /** Validates one header; throws `archive_rejected` or `limit_exceeded` naming the entry. */
  admit(header: Header): AdmittedEntry {
    const name = header.name;
    const { limits } = this.options;
    this.entries += 1;
    if (this.entries > limits.maxEntries)
      throw limitExceeded(name, "maxEntries", limits.maxEntries, this.entries);
    const kind = kindOf(header);
    if (kind === null)
      throw rejectEntry(
        name,
        "unsupported_type",
        `entry type ${header.type ?? "unknown"} is not allowed`,
      );
    const path = normalizeMemberName(name);
    if (path === "" && kind !== "directory")
      throw rejectEntry(name, "root_not_directory", "the root must be a directory");
    this.refuseWriteThrough(name, path);
    const size = kind === "file" ? (header.size ?? 0) : 0;
    if (size > limits.maxEntryBytes)
      throw limitExceeded(name, "maxEntryBytes", limits.maxEntryBytes, size);
    this.bytes += size;
    if (this.bytes > limits.maxBytes)
      throw limitExceeded(name, "maxBytes", limits.maxBytes, this.bytes);
    const linkTarget = this.checkLink(kind, name, path, header.linkname ?? "");
    if (kind === "symlink")
      this.symlinks.set(
        path,
        relativeToRoot(path, linkTarget as string, this.options.absoluteRoot),
      );
    else this.symlinks.delete(path);
    return {
      kind,
      name,
      path,
      mode: keptMode(header.mode ?? (kind === "directory" ? 0o755 : 0o644)),
      mtime: Math.floor((header.mtime?.getTime() ?? 0) / 1000),
      size,
      linkTarget,
    };
  }

  /**
   * Resolves every symlink of the archive through the others (and, when given, through `lookup` for
   * paths the archive does not hold) and throws `archive_rejected` for the first that leaves the root.
   */
  async verifySymlinks(lookup?: SymlinkLookup): Promise<void> {
    if (this.options.allowSymlinksOutsideRoot) return;
    const known = (path: string) => this.symlinks.get(path) ?? (lookup ? lookup(path) : null);
    for (const [path, target] of this.symlinks) {
      if (!(await symlinkResolvesInside(path, target, known))) {
        throw rejectEntry(
          `./${path}`,
          "symlink_escape",
          `symlink target ${JSON.stringify(target)} resolves outside the root`,
        );
      }
    }
  }

  private refuseWriteThrough(name: string, path: string): void {
    if (this.symlinks.size === 0) return;
    for (let index = path.indexOf("/"); index !== -1; index = path.indexOf("/", index + 1)) {
      const ancestor = path.slice(0, index);
      if (this.symlinks.has(ancestor)) {
        throw rejectEntry(
          name,
          "write_through_symlink",
          `it would be written through symlink ${JSON.stringify(`./${ancestor}`)}`,
        );
      }
    }
  }

  private checkLink(
    kind: ArchiveEntryKind,
    name: string,
    path: string,
    linkname: string,
  ): string | null {
    if (kind === "symlink") {
      if (linkname.length === 0)
        throw rejectEntry(name, "invalid_name", "the symlink has no target");
      const problem = nameProblem(linkname);
      if (problem !== null)
        throw rejectEntry(
          name,
          "invalid_name",
          `the symlink target cannot be written as bytes: ${problem}`,
        );
      if (
        !this.options.allowSymlinksOutsideRoot &&
        !symlinkTargetStaysInside(path, relativeToRoot(path, linkname, this.options.absoluteRoot))
      ) {
        throw rejectEntry(
          name,
          "symlink_escape",
          `symlink target ${JSON.stringify(linkname)} points outside the root`,
        );
      }
      return linkname;
    }
    if (kind !== "hardlink") return null;
    if (linkname.startsWith("/") || linkname.split("/").includes("..")) {
      throw rejectEntry(
        name,
        "hardlink_escape",
        `hardlink target ${JSON.stringify(linkname)} points outside the root`,
      );
    }
    const target = normalizeMemberName(linkname, name);
    if (target === "" || target === path)
      throw rejectEntry(name, "hardlink_escape", "a hardlink must name another file");
    for (const ancestor of [...ancestorsOf(target), target]) {
      if (this.symlinks.has(ancestor)) {
        throw rejectEntry(
          name,
          "hardlink_escape",
          `hardlink target ${JSON.stringify(linkname)} goes through symlink ${JSON.stringify(`./${ancestor}`)}`,
        );
      }
    }
    return target;
  }
}

/**
 * Rewrites an absolute target at or below `absoluteRoot` as the relative target that names the same
 * path from the link's folder, so the lexical and resolving checks see where it really points.
 */
function relativeToRoot(linkPath: string, target: string, absoluteRoot: string | null): string {
  if (absoluteRoot === null || !(target === absoluteRoot || target.startsWith(`${absoluteRoot}/`)))
    return target;
  const depth = parentOf(linkPath) === "" ? 0 : parentOf(linkPath).split("/").length;
  const inside = target.slice(absoluteRoot.length).replace(/^\/+/, "");
  return `${"../".repeat(depth)}${inside}` || ".";
}

function kindOf(header: Header): ArchiveEntryKind | null {
  switch (header.type) {
    case "file":
    case "contiguous-file":
      return "file";
    case "directory":
      return "directory";
    case "symlink":
      return "symlink";
    case "link":
      return "hardlink";
    default:
      return null;
  }
}
