import { UnsupportedOperationError } from "@open-managed-agents/runtime-resource-contract";
import type { RouteHandler } from "./router.js";

const REASONS: Readonly<Record<string, string>> = {
  stop: "a Cloudflare container starts from a fresh disk after a stop, so stop and start would lose the sandbox's files",
  start:
    "a Cloudflare container starts from a fresh disk after a stop, so stop and start would lose the sandbox's files",
  pause: "Cloudflare containers cannot be paused",
  resume: "Cloudflare containers cannot be paused",
  snapshots:
    "@cloudflare/sandbox 0.12.10 has no container snapshots (its directory backups are not disk snapshots)",
  fork: "@cloudflare/sandbox 0.12.10 has no container snapshots to fork from",
};

/** A handler that refuses `operation` with `unsupported_operation` and the reason. */
export function unsupported(operation: keyof typeof REASONS & string): RouteHandler {
  return async () => {
    throw new UnsupportedOperationError({
      message: `${operation} is not supported: ${REASONS[operation]}`,
      context: { operation },
    });
  };
}
