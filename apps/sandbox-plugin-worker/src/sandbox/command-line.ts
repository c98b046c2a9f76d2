import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { ExecRequest } from "../protocol/schemas.js";

/** Session token of the SDK that runs each command as a fresh process, outside any shell session. */
export const SESSIONLESS = "__DISABLE_SESSION__";
/** Exit status of coreutils `timeout` when the deadline stopped the command. */
export const TIMEOUT_EXIT_CODE = 124;
/** Grace between the deadline's SIGTERM and its SIGKILL. */
const KILL_AFTER_SECONDS = 5;

/** Single-quotes one argument for a POSIX shell. */
export const quoteArgument = shellQuote;

/** The shell command for an argv; a deadline runs it under coreutils `timeout` (exit 124 when it fires). */
export function commandLine(request: Pick<ExecRequest, "argv" | "timeoutMs">): string {
  const command = request.argv.map(quoteArgument).join(" ");
  if (request.timeoutMs === undefined) return command;
  return `timeout -k ${KILL_AFTER_SECONDS} ${request.timeoutMs / 1_000}s ${command}`;
}
