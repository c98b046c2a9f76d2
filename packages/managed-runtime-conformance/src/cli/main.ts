#!/usr/bin/env node
import { runCli } from "./run-cli.js";

const status = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
// Exit once the output is written, whatever a driver left behind: a case stopped by --timeout may still be
// running, and a driver's own timers or sockets would otherwise keep the process (and a CI job) alive.
await Promise.all([flush(process.stdout), flush(process.stderr)]);
process.exit(status);

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
