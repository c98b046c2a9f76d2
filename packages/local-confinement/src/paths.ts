import { type Stats, statSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { DEFAULT_SANDBOX_CWD, type PathMappingMode, type PathMounts } from "./types.js";

/** Options of {@link mapPath}. */
export interface MapPathOptions {
  /**
   * The mapping mode the path was written for. In `rewrite` mode a process sees host paths
   * literally, so a path already under a host directory of the table maps to itself instead of
   * being mapped again (a host directory under `/tmp` with `/tmp` mounted, for example).
   * @default "namespace"
   */
  readonly mode?: PathMappingMode;
}

/** Normalizes a sandbox path to an absolute POSIX path; relative paths resolve against `cwd`. */
export function normalizeSandboxPath(
  sandboxPath: string,
  cwd: string = DEFAULT_SANDBOX_CWD,
): string {
  if (sandboxPath.includes("\0")) {
    throw new InvalidRequestError({
      message: "sandbox path contains a NUL byte",
      context: { path: sandboxPath.replace(/\0/g, "") },
    });
  }
  return posix.resolve("/", cwd, sandboxPath);
}

/**
 * Maps a sandbox path to the host path that backs it, for file I/O done from Node. The longest
 * matching mount wins; a path under no mount maps to itself, as the process would see it.
 */
export function mapPath(
  sandboxPath: string,
  mounts: PathMounts,
  cwd: string = DEFAULT_SANDBOX_CWD,
  options: MapPathOptions = {},
): string {
  const absolute = normalizeSandboxPath(sandboxPath, cwd);
  const normalized = normalizeMounts(mounts);
  const protectedHostDirs = options.mode === "rewrite" ? hostDirsOf(normalized) : new Set<string>();
  for (const prefix of prefixesLongestFirst(normalized, protectedHostDirs)) {
    if (absolute !== prefix && !absolute.startsWith(`${prefix}/`)) continue;
    if (normalized[prefix] === undefined) return absolute;
    const hostDir = normalized[prefix];
    return absolute === prefix ? hostDir : join(hostDir, absolute.slice(prefix.length + 1));
  }
  return absolute;
}

/**
 * Rewrites every literal occurrence of a mount point that starts a path (not preceded by a path
 * character, followed by `/`, the end, or a non-path character) to its host directory. One pass:
 * text already rewritten, or naming a host directory of the table, is never rewritten again.
 */
export function rewriteSandboxPaths(value: string, mounts: PathMounts): string {
  return createPathRewriter(mounts)(value);
}

/** {@link rewriteSandboxPaths} for one table, with its pattern built once for many values. */
export function createPathRewriter(mounts: PathMounts): (value: string) => string {
  const prefixes = prefixesLongestFirst(mounts, hostDirsOf(mounts));
  if (prefixes.length === 0) return (value) => value;
  const pattern = new RegExp(
    `(?<![\\w.\\-/])(?:${prefixes.map(escapeRegExp).join("|")})(?=/|$|[^\\w.\\-])`,
    "g",
  );
  // A mount point wins over an equal host directory, so `{"/a": "/b", "/b": "/c"}` still maps `/b`.
  return (value) => value.replace(pattern, (match) => mounts[match] ?? match);
}

/** Normalizes mount points (absolute, not `/`, no trailing slash) and resolves host directories. */
export function normalizeMounts(mounts: PathMounts): PathMounts {
  const result: Record<string, string> = {};
  for (const [mountPoint, hostDir] of Object.entries(mounts)) {
    const normalized = posix.normalize(mountPoint).replace(/\/+$/, "");
    if (!mountPoint.startsWith("/") || normalized === "" || normalized.includes("\0")) {
      throw new InvalidRequestError({
        message: `mount point must be an absolute path other than /: ${mountPoint}`,
        context: { mountPoint },
      });
    }
    result[normalized] = resolve(hostDir);
  }
  return result;
}

/** A host directory's identity: its device and inode, as `dev:ino`. */
export type DirectoryIdentity = string;

/**
 * Normalizes the table and checks that every host directory exists; returns the identity of each
 * host directory by mount point, so a kept namespace can tell a directory replaced since.
 */
export function validateMounts(mounts: PathMounts): {
  readonly mounts: PathMounts;
  readonly identities: Readonly<Record<string, DirectoryIdentity>>;
} {
  const normalized = normalizeMounts(mounts);
  const identities: Record<string, DirectoryIdentity> = {};
  for (const [mountPoint, hostDir] of Object.entries(normalized)) {
    const info = statOrUndefined(hostDir);
    if (info === undefined) {
      throw new InvalidRequestError({
        message: `host directory for ${mountPoint} does not exist: ${hostDir}`,
        context: { mountPoint, hostDir },
      });
    }
    identities[mountPoint] = `${info.dev}:${info.ino}`;
  }
  return { mounts: normalized, identities };
}

/** Mount points ordered so a parent is mounted before the mount points nested in it. */
export function mountPointsShortestFirst(mounts: PathMounts): string[] {
  return Object.keys(mounts).sort((left, right) => left.length - right.length);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Host directories worth protecting from a second mapping; `/` would swallow every path. */
function hostDirsOf(mounts: PathMounts): Set<string> {
  return new Set(Object.values(mounts).filter((hostDir) => hostDir !== "/"));
}

/** Mount points and protected host directories, longest first; on equal text the mount point stays. */
function prefixesLongestFirst(mounts: PathMounts, hostDirs: ReadonlySet<string>): string[] {
  const prefixes = new Set([...Object.keys(mounts), ...hostDirs]);
  return [...prefixes].sort((left, right) => right.length - left.length);
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
