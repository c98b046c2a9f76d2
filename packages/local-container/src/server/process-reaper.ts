import { readFileSync, readdirSync } from "node:fs";

/**
 * Environment variable every command of a local container carries (`<server id>:<container id>`). A
 * process group ends when its leader exits, but members it left running (`cmd &`, `setsid`) do not; the
 * marker finds them on destroy. A command that clears its environment escapes this sweep.
 */
export const CONTAINER_MARKER_ENV = "OMA_LOCAL_CONTAINER";

/**
 * Sends `signal` to every process whose environment carries `marker`, synchronously. Reads `/proc`, so it
 * finds nothing on systems without it (there, only live process groups are signalled). Returns the count.
 */
export function killMarkedProcesses(marker: string, signal: NodeJS.Signals): number {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return 0;
  }
  const needle = Buffer.from(`${CONTAINER_MARKER_ENV}=${marker}\0`);
  let count = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${entry}/environ`);
      if (!includesVariable(environment, needle)) continue;
      process.kill(pid, signal);
      count += 1;
    } catch {
      // Gone or not readable: nothing to signal.
    }
  }
  return count;
}

function includesVariable(environment: Buffer, needle: Buffer): boolean {
  // The variable is either first or follows a NUL separator.
  if (environment.subarray(0, needle.length).equals(needle)) return true;
  const separated = Buffer.concat([Buffer.from([0]), needle]);
  return environment.includes(separated);
}
