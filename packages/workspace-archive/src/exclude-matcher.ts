/** Decides whether a root-relative path is excluded from an archive. */
export type ExcludeMatcher = (path: string, isDirectory: boolean) => boolean;

interface CompiledPattern {
  readonly regex: RegExp;
  /** Patterns without a slash match the last segment at any depth; others match the whole path. */
  readonly basenameOnly: boolean;
  readonly directoryOnly: boolean;
}

/**
 * Compiles exclude globs. `*` and `?` stay inside one segment, `**` spans segments, `[abc]`/`[!abc]` are
 * character classes. A pattern without `/` (`node_modules`, `*.log`) matches a name at any depth; one with
 * `/` (`build/cache`, `src/**\/*.tmp`, `/dist`) matches the path from the root. A trailing `/` matches
 * directories only. An excluded directory is skipped with everything below it.
 */
export function createExcludeMatcher(patterns: readonly string[]): ExcludeMatcher {
  const compiled = patterns.map(compilePattern).filter((pattern): pattern is CompiledPattern => pattern !== null);
  if (compiled.length === 0) return () => false;
  return (path, isDirectory) => {
    const slash = path.lastIndexOf("/");
    const name = slash === -1 ? path : path.slice(slash + 1);
    return compiled.some((pattern) => (!pattern.directoryOnly || isDirectory) && pattern.regex.test(pattern.basenameOnly ? name : path));
  };
}

function compilePattern(raw: string): CompiledPattern | null {
  let pattern = raw.trim();
  while (pattern.startsWith("./")) pattern = pattern.slice(2);
  const directoryOnly = pattern.endsWith("/");
  pattern = pattern.replace(/\/+$/, "");
  const anchored = pattern.startsWith("/");
  pattern = pattern.replace(/^\/+/, "");
  if (pattern === "" || pattern === ".") return null;
  return { regex: new RegExp(`^${globToRegexSource(pattern)}$`, "u"), basenameOnly: !anchored && !pattern.includes("/"), directoryOnly };
}

function globToRegexSource(glob: string): string {
  let source = "";
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index] as string;
    if (char === "*") {
      if (glob[index + 1] === "*") {
        const slashAfter = glob[index + 2] === "/";
        source += slashAfter ? "(?:.*/)?" : ".*";
        index += slashAfter ? 2 : 1;
      } else source += "[^/]*";
    } else if (char === "?") source += "[^/]";
    else if (char === "[") {
      const close = glob.indexOf("]", index + 2);
      if (close === -1) source += "\\[";
      else {
        const body = glob.slice(index + 1, close).replace(/^!/, "^").replace(/\\/g, "\\\\");
        source += `[${body}]`;
        index = close;
      }
    } else source += char.replace(/[.+^${}()|\\/\]]/g, "\\$&");
  }
  return source;
}
