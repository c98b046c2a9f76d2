import { readFile, readdir } from "node:fs/promises";

/** Pids of live processes whose command line or environment contains `needle` (Linux /proc; root sees all). */
export async function processesContaining(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    for (const file of ["cmdline", "environ"]) {
      const bytes = await readFile(`/proc/${entry}/${file}`).catch(() => null);
      if (bytes?.includes(needle)) {
        found.push(Number(entry));
        break;
      }
    }
  }
  return found;
}

/** Every live process's command line, NUL separators shown as spaces. */
export async function allCommandLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const bytes = await readFile(`/proc/${entry}/cmdline`).catch(() => null);
    if (bytes && bytes.length > 0) lines.push(bytes.toString("utf8").replaceAll("\0", " "));
  }
  return lines;
}
