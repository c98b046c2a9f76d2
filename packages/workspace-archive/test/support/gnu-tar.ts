import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Runs GNU tar (or another tool) and returns its stdout; a non-zero exit rejects. */
export async function tool(command: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run(command, [...args], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
