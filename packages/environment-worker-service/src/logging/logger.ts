import type { HostLogger, LogFields } from "@open-managed-agents/managed-runtime-host";
import { redactSecrets } from "@open-managed-agents/runtime-resource-contract";
import { createRequire } from "node:module";
import { type Logger as Pino, pino } from "pino";
import type PinoPretty from "pino-pretty";

type Level = "debug" | "info" | "warn" | "error";

/** Environment variable names whose values are credentials, redacted from every line. */
const CREDENTIAL_NAME = /(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL)/i;

/** Observes every event the service logs (metrics and readiness read them). */
export type LogTap = (level: Level, event: string, fields: LogFields) => void;

/** The service's one logger: JSON lines (readable on a TTY), every known credential redacted. */
export interface ServiceLogger {
  /** For the host and the environment worker. */
  readonly host: HostLogger;
  /** For the SDK client's `logger` option: its retry and connection lines come here instead of the console. */
  readonly sdk: {
    error(...args: unknown[]): void;
    warn(...args: unknown[]): void;
    info(...args: unknown[]): void;
    debug(...args: unknown[]): void;
  };
  /** Adds strings to redact (secrets learned after start). */
  addSecrets(values: readonly string[]): void;
  /** Redacts one string against every known credential. */
  redact(text: string): string;
  tap(listener: LogTap): void;
  flush(): void;
}

export interface ServiceLoggerOptions {
  readonly level: Level;
  readonly format: "json" | "pretty" | "auto";
  readonly secrets: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where lines go. @default stderr (stdout stays free for --check and the operator CLI) */
  readonly destination?: NodeJS.WritableStream;
}

/** `pino-pretty`, loaded only where lines are printed for a person: a JSON deployment never holds it. */
function prettyStream(): typeof PinoPretty {
  return createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
}

/** Creates the service logger on `pino`. */
export function createServiceLogger(options: ServiceLoggerOptions): ServiceLogger {
  const destination = options.destination ?? process.stderr;
  const prettyOutput =
    options.format === "pretty" ||
    (options.format === "auto" && (destination as { isTTY?: boolean }).isTTY === true);
  const base: Pino = pino(
    { level: options.level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
    prettyOutput
      ? prettyStream()({ destination: destination as never, colorize: true, sync: true })
      : (destination as never),
  );
  const secrets = new Set<string>(options.secrets.filter((value) => value.length >= 4));
  for (const [name, value] of Object.entries(options.env ?? {}))
    if (value && value.length >= 8 && CREDENTIAL_NAME.test(name)) secrets.add(value);
  const taps: LogTap[] = [];
  const redact = (text: string) => redactSecrets(text, [...secrets]);
  const safeFields = (fields: LogFields) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      out[key] =
        typeof value === "string"
          ? redact(value)
          : Array.isArray(value)
            ? value.map((entry) => (typeof entry === "string" ? redact(entry) : entry))
            : value;
    }
    return out;
  };
  const emit = (level: Level) => (event: string, fields: LogFields) => {
    const safe = safeFields(fields);
    base[level]({ event: redact(event), ...safe }, redact(event));
    for (const listener of taps) {
      try {
        listener(level, event, fields);
      } catch {
        // A broken metric never changes what the service does.
      }
    }
  };
  const host: HostLogger & { debug: (event: string, fields: LogFields) => void } = {
    debug: emit("debug"),
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
  };
  const sdkLine =
    (level: Level) =>
    (...args: unknown[]) => {
      const message = args
        .map((arg) => (typeof arg === "string" ? arg : safeStringify(arg)))
        .join(" ");
      host[level]("sdk.log", { message });
    };
  return {
    host,
    sdk: {
      error: sdkLine("error"),
      warn: sdkLine("warn"),
      info: sdkLine("info"),
      debug: sdkLine("debug"),
    },
    addSecrets(values) {
      for (const value of values) if (value.length >= 4) secrets.add(value);
    },
    redact,
    tap: (listener) => taps.push(listener),
    flush: () => base.flush(),
  };
}

function safeStringify(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
