import { parentOf } from "./entry-name.js";

/** Returns the target of the symlink at a root-relative path, or null when the path is not a symlink. */
export type SymlinkLookup = (path: string) => string | null | Promise<string | null>;

/** Links followed before resolution stops; the kernel fails such paths with ELOOP, so they cannot escape. */
const MAX_LINK_HOPS = 40;

/**
 * Follows the symlink at `linkPath` (target `target`) through every symlink `lookup` knows, the way the
 * kernel would, and reports whether the path it finally names is still inside the root. Unlike a
 * lexical check this catches `x -> sub/r/..` where `sub/r -> ..` is itself a link.
 */
export async function symlinkResolvesInside(
  linkPath: string,
  target: string,
  lookup: SymlinkLookup,
): Promise<boolean> {
  const parent = parentOf(linkPath);
  const stack = parent === "" ? [] : parent.split("/");
  let pending = target.split("/");
  if (target.startsWith("/")) return false;
  let hops = 0;
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (stack.length === 0) return false;
      stack.pop();
      continue;
    }
    stack.push(segment);
    const next = await lookup(stack.join("/"));
    if (next === null) continue;
    hops += 1;
    if (hops > MAX_LINK_HOPS) return true;
    if (next.startsWith("/")) return false;
    stack.pop();
    pending = [...next.split("/"), ...pending];
  }
  return true;
}
