import type { HostLogger, LogFields } from "@open-managed-agents/managed-runtime-host";
import type { LogLevel } from "./config.js";

const RANK: Readonly<Record<LogLevel, number>> = { info: 0, warn: 1, error: 2, silent: 3 };

/** Writes events at or above `level` as one JSON line each (Workers Logs). The host never logs a token. */
export function createConsoleLogger(level: LogLevel): HostLogger {
  const line =
    (severity: Exclude<LogLevel, "silent">, write: (text: string) => void) =>
    (event: string, fields: LogFields) => {
      if (RANK[severity] >= RANK[level])
        write(JSON.stringify({ level: severity, event, ...fields }));
    };
  return {
    info: line("info", console.log),
    warn: line("warn", console.warn),
    error: line("error", console.error),
  };
}
