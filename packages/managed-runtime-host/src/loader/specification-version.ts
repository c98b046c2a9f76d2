import {
  type ErrorCode,
  type ErrorContext,
  MANAGED_RUNTIME_SPECIFICATION_VERSION,
  createError,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * Refuses a driver whose descriptor names no contract revision or another one than this host's
 * {@link MANAGED_RUNTIME_SPECIFICATION_VERSION}. It runs before the descriptor is parsed, so a driver
 * of another revision is told so rather than failing on whichever field changed. The error names both
 * revisions in its message and context (`driverSpecificationVersion`, `hostSpecificationVersion`).
 */
export function assertSpecificationVersion(
  descriptor: unknown,
  options: { readonly driver: string; readonly code: ErrorCode; readonly context?: ErrorContext },
): void {
  const declared =
    typeof descriptor === "object" && descriptor !== null
      ? (descriptor as Record<string, unknown>).specificationVersion
      : undefined;
  if (declared === MANAGED_RUNTIME_SPECIFICATION_VERSION) return;
  // A string is shown as the driver wrote it (capped: it is the driver's text); anything else as missing.
  const driverVersion = typeof declared === "string" ? declared.slice(0, 32) : null;
  const stated =
    driverVersion === null
      ? "declares no contract specification version"
      : `implements contract specification ${driverVersion}`;
  throw createError(options.code, {
    message: `${options.driver} ${stated}; this host implements ${MANAGED_RUNTIME_SPECIFICATION_VERSION}`,
    context: {
      ...options.context,
      driverSpecificationVersion: driverVersion,
      hostSpecificationVersion: MANAGED_RUNTIME_SPECIFICATION_VERSION,
    },
  });
}
