import { redactSecrets } from "@open-managed-agents/runtime-resource-contract";

/** A value a log field may hold. */
export type LogValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly (string | number | boolean | null)[];

/** Structured log fields. Hosts never put fence tokens, credentials or egress binding ids in them. */
export type LogFields = Readonly<Record<string, LogValue>>;

/** Where the host reports what it does. `event` is a dotted name such as `fence.acquired`. */
export interface HostLogger {
  info(event: string, fields: LogFields): void;
  warn(event: string, fields: LogFields): void;
  error(event: string, fields: LogFields): void;
}

/** A logger that drops everything. */
export const silentLogger: HostLogger = { info() {}, warn() {}, error() {} };

/**
 * Wraps a logger so every string field is redacted against the secrets `secrets()` returns at call
 * time, and a throwing logger never disturbs the caller.
 */
export function createRedactingLogger(
  logger: HostLogger,
  secrets: () => readonly string[],
): HostLogger {
  if (logger === silentLogger) return silentLogger;
  const emit = (level: keyof HostLogger) => (event: string, fields: LogFields) => {
    const known = secrets();
    const safe: Record<string, LogValue> = {};
    for (const [key, value] of Object.entries(fields)) safe[key] = redactValue(value, known);
    try {
      logger[level](redactSecrets(event, known), safe);
    } catch {
      // Logging is best effort: a broken sink must not change a run's outcome.
    }
  };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

function redactValue(value: LogValue, secrets: readonly string[]): LogValue {
  if (typeof value === "string") return redactSecrets(value, secrets);
  if (Array.isArray(value))
    return value.map((entry) =>
      typeof entry === "string" ? redactSecrets(entry, secrets) : entry,
    );
  return value;
}
