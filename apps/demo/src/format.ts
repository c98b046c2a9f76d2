/** Human-readable byte count. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Milliseconds, right-aligned for step tables. */
export function formatDuration(ms: number): string {
  return `${ms.toFixed(0).padStart(6)} ms`;
}

/** Writes one line to stdout. */
export function say(line = ""): void {
  process.stdout.write(`${line}\n`);
}
