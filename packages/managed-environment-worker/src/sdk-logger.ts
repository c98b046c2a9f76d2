import type { HostLogger } from "@open-managed-agents/managed-runtime-host";
import type { ManagedAgentsClient } from "./sdk-client.js";

type Level = "error" | "warn" | "info";

/**
 * The caller's client, with the SDK's own log lines (a failed poll it retries, connection errors, retries)
 * sent to the worker's logger as `sdk.log` events instead of the console, where they would bypass it. Only
 * when the worker has a logger and the client would print to the console: a client given its own `logger`
 * keeps it.
 */
export function routeSdkLogs(
  client: ManagedAgentsClient,
  logger: HostLogger | undefined,
): ManagedAgentsClient {
  if (!logger || (client as { logger?: unknown }).logger !== console) return client;
  const line =
    (level: Level) =>
    (...args: unknown[]) =>
      logger[level]("sdk.log", { message: args.map(describe).join(" ") });
  return client.withOptions({
    logger: { error: line("error"), warn: line("warn"), info: line("info"), debug: line("info") },
  });
}

function describe(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
