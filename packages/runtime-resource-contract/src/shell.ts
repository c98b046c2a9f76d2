/**
 * Quotes a value for POSIX `sh` as one word: wrapped in single quotes, each `'` written as `'\''`.
 * Every package that builds a command line for a sandbox (readiness probes, bridge file and archive
 * commands, join plans) quotes with this one rule.
 */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
