/**
 * The variables a helper program started on the host (zstd, mkfifo, workerd) needs to run, and nothing
 * else: a process that holds keys in its environment (an environment worker, a stack) must not pass them
 * to every child it starts.
 */
export const CHILD_ENVIRONMENT_NAMES: readonly string[] = [
  "PATH",
  "HOME",
  "TMPDIR",
  "LANG",
  "LC_ALL",
  "TZ",
];

/**
 * The named variables of `source` that are set, for `spawn`'s `env` option (`spawn` also looks the
 * program up on that `PATH`). @param names defaults to {@link CHILD_ENVIRONMENT_NAMES}
 */
export function childEnvironment(
  names: readonly string[] = CHILD_ENVIRONMENT_NAMES,
  source: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
