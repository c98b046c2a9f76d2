import { nameProblem } from "./name-bytes.js";
import { rejectEntry } from "./rejections.js";

/**
 * Normalizes a member name to a root-relative path without `./`, empty or trailing segments (`""` is the
 * root). Refuses absolute names, `..` segments, NUL bytes and unpaired surrogates: `entry` is the raw name
 * the error reports.
 */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

export function normalizeMemberName(name: string, entry: string = name): string {
  // Nearly every name is already clean (`./a/b`, `./dir/`): returned without splitting it apart.
  const problem = nameProblem(name);
  if (problem !== null)
    throw rejectEntry(entry, "invalid_name", `the name cannot be written as bytes: ${problem}`);
  if (name.startsWith("./")) {
    const rest = name.endsWith("/") ? name.slice(2, -1) : name.slice(2);
    if (rest.length > 0 && !rest.startsWith("/") && !rest.includes("//") && !DOT_SEGMENT.test(rest))
      return rest;
  }
  if (name.length === 0) throw rejectEntry(entry, "empty_name", "the name is empty");
  if (name.startsWith("/"))
    throw rejectEntry(entry, "absolute_name", "absolute names are not allowed");
  const segments: string[] = [];
  for (const segment of name.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..")
      throw rejectEntry(entry, "parent_segment", "'..' segments are not allowed");
    segments.push(segment);
  }
  return segments.join("/");
}

/** The member name our archives use for a root-relative path: `./`, `./a.txt`, `./dir/`. */
export function toMemberName(path: string, directory: boolean): string {
  if (path === "") return "./";
  return directory ? `./${path}/` : `./${path}`;
}

/** Proper ancestors of a root-relative path, shallowest first: `a/b/c` → `a`, `a/b`. */
export function ancestorsOf(path: string): string[] {
  const ancestors: string[] = [];
  let index = path.indexOf("/");
  while (index !== -1) {
    ancestors.push(path.slice(0, index));
    index = path.indexOf("/", index + 1);
  }
  return ancestors;
}

/** Parent of a root-relative path (`""` for top-level names). */
export function parentOf(path: string): string {
  const index = path.lastIndexOf("/");
  return index === -1 ? "" : path.slice(0, index);
}

/**
 * True when a symlink at `linkPath` with target `target` stays inside the root when read lexically
 * (without following other links). Absolute targets never do.
 */
export function symlinkTargetStaysInside(linkPath: string, target: string): boolean {
  if (target.length === 0 || target.startsWith("/")) return false;
  let depth = parentOf(linkPath) === "" ? 0 : parentOf(linkPath).split("/").length;
  for (const segment of target.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      depth -= 1;
      if (depth < 0) return false;
    } else depth += 1;
  }
  return true;
}
