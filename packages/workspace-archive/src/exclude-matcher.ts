import picomatch from "picomatch";

/** Decides whether a root-relative path is excluded from an archive. */
export type ExcludeMatcher = (path: string, isDirectory: boolean) => boolean;

interface CompiledPattern {
  readonly test: (path: string) => boolean;
  /** Patterns without a slash match the last segment at any depth; others match the whole path. */
  readonly basenameOnly: boolean;
  readonly directoryOnly: boolean;
}

/**
 * Compiles exclude globs with picomatch. `*` and `?` stay inside one segment, `**` spans segments,
 * `[abc]`/`[!abc]` are character classes, and dotfiles match like any name. A pattern without `/`
 * (`node_modules`, `*.log`) matches a name at any depth; one with `/` (`build/cache`, `src/**\/*.tmp`,
 * `/dist`) matches the path from the root. A trailing `/` matches directories only. An excluded directory
 * is skipped with everything below it.
 */
export function createExcludeMatcher(patterns: readonly string[]): ExcludeMatcher {
  const compiled = patterns
    .map(compilePattern)
    .filter((pattern): pattern is CompiledPattern => pattern !== null);
  if (compiled.length === 0) return () => false;
  return (path, isDirectory) => {
    const slash = path.lastIndexOf("/");
    const name = slash === -1 ? path : path.slice(slash + 1);
    return compiled.some(
      (pattern) =>
        (!pattern.directoryOnly || isDirectory) && pattern.test(pattern.basenameOnly ? name : path),
    );
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
  // Braces and extglobs stay literal, as the patterns' documented grammar has neither.
  const options = { dot: true, nobrace: true, noextglob: true, posix: true };
  const matches = picomatch(pattern, options);
  // picomatch lets `dir/**` match `dir` itself; here a trailing `/**` means what lies below it, not the directory.
  const itself = pattern.endsWith("/**") ? picomatch(pattern.slice(0, -3), options) : null;
  const test = itself ? (path: string) => matches(path) && !itself(path) : matches;
  return { test, basenameOnly: !anchored && !pattern.includes("/"), directoryOnly };
}
