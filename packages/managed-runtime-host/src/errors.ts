import {
  type ErrorContext,
  ManagedRuntimeError,
  createError,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";

const hostErrors = new WeakSet<ManagedRuntimeError>();

/**
 * Whether a store refused a call without writing anything (`context.busy`): another connection held it locked, its
 * server could not be reached or was starting up (`unavailable`), or it refused writes for now (a read-only
 * Postgres, `storage_unwritable`). The call may be made again.
 */
export function isBusyStore(error: unknown): boolean {
  return (
    (ManagedRuntimeError.hasCode(error, "unavailable") ||
      ManagedRuntimeError.hasCode(error, "storage_unwritable")) &&
    (error as ManagedRuntimeError).context.busy === true
  );
}

/** Marks an error the host built itself, so {@link stageError} passes it through unchanged. */
export function markHostError<E extends ManagedRuntimeError>(error: E): E {
  hostErrors.add(error);
  return error;
}

/**
 * Turns anything a port threw into a typed error that names the host `stage`, with every secret
 * redacted from its message, context and cause. Typed errors keep their code; anything else becomes
 * `internal`. The original error is replaced by a redacted copy, so no token survives in `cause` or a stack.
 */
export function stageError(
  error: unknown,
  stage: string,
  secrets: readonly string[],
): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error) && hostErrors.has(error)) return error;
  const typed = ManagedRuntimeError.isInstance(error) ? error : null;
  const rawMessage = error instanceof Error ? error.message : String(error);
  const context: Record<string, unknown> = { ...(typed?.context ?? {}), stage };
  if (!typed) context.errorName = error instanceof Error ? error.name : typeof error;
  return markHostError(
    createError(typed?.code ?? "internal", {
      message: redactSecrets(`${stage} failed: ${rawMessage}`, secrets),
      context: redactContext(context, secrets),
      cause: redactedCopy(error, rawMessage, secrets),
    }),
  );
}

/** The redacted message of any thrown value. */
export function redactedMessage(error: unknown, secrets: readonly string[]): string {
  return redactSecrets(error instanceof Error ? error.message : String(error), secrets);
}

function redactContext(context: Record<string, unknown>, secrets: readonly string[]): ErrorContext {
  const safe: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (typeof value === "string") safe[key] = redactSecrets(value, secrets);
    else if (Array.isArray(value))
      safe[key] = value.map((entry) =>
        typeof entry === "string" ? redactSecrets(entry, secrets) : entry,
      );
    else safe[key] = value;
  }
  return safe as ErrorContext;
}

function redactedCopy(error: unknown, rawMessage: string, secrets: readonly string[]): Error {
  const copy = new Error(redactSecrets(rawMessage, secrets));
  copy.name = error instanceof Error ? error.name : "NonError";
  copy.stack =
    error instanceof Error && error.stack ? redactSecrets(error.stack, secrets) : copy.stack;
  return copy;
}
