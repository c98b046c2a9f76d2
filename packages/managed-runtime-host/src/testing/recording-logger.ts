import type { HostLogger, LogFields } from "../logger.js";

/** One captured log line. */
export interface LogEntry {
  readonly level: "info" | "warn" | "error";
  readonly event: string;
  readonly fields: LogFields;
}

/** A logger that keeps every line. */
export interface RecordingLogger extends HostLogger {
  readonly entries: readonly LogEntry[];
  /** Every line as JSON, one per line: what a log sink would store. */
  serialized(): string;
}

/** Creates a {@link RecordingLogger}. */
export function createRecordingLogger(): RecordingLogger {
  const entries: LogEntry[] = [];
  const record = (level: LogEntry["level"]) => (event: string, fields: LogFields) =>
    void entries.push({ level, event, fields });
  return {
    entries,
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
    serialized: () => entries.map((entry) => JSON.stringify(entry)).join("\n"),
  };
}
