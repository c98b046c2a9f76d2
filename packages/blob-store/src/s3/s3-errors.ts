import {
  InternalError,
  ManagedRuntimeError,
  NotFoundError,
  UnauthorizedError,
  UpstreamProtocolError,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";

/** What the store knows when an S3 call fails. */
export interface S3FailureContext {
  readonly operation: string;
  readonly bucket: string;
  readonly key?: string;
  /** Values to redact from any message taken from the error. */
  readonly secrets: readonly string[];
}

interface SdkErrorShape {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
  readonly $fault?: unknown;
  readonly $response?: unknown;
}

/** HTTP status of an SDK error, when the service answered. */
export function s3Status(error: unknown): number | undefined {
  const status = (error as SdkErrorShape | null)?.$metadata?.httpStatusCode;
  return typeof status === "number" ? status : undefined;
}

/** SDK error name (`NoSuchKey`, `NotFound`, `PreconditionFailed`, ...). */
export function s3ErrorName(error: unknown): string {
  const name = (error as SdkErrorShape | null)?.name;
  return typeof name === "string" ? name : "Error";
}

/**
 * Maps an S3 failure to a typed error: 401/403 → `unauthorized`; a missing bucket → `not_found`;
 * an answer the SDK could not parse → `upstream_protocol`; anything else → `internal`. Messages
 * name the operation, bucket and status; credentials are redacted from any text kept.
 */
export function mapS3Error(error: unknown, context: S3FailureContext): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const status = s3Status(error);
  const name = s3ErrorName(error);
  const rawMessage =
    typeof (error as SdkErrorShape | null)?.message === "string"
      ? String((error as SdkErrorShape).message)
      : "";
  const detail = redactSecrets(rawMessage, context.secrets).slice(0, 300);
  const safeContext = {
    operation: context.operation,
    bucket: context.bucket,
    key: context.key,
    status: status ?? null,
    errorName: name,
  };
  const message = `S3 ${context.operation} on bucket '${context.bucket}' failed${status ? ` with status ${status}` : ""}: ${name}${detail ? ` (${detail})` : ""}`;
  const options = { message, context: safeContext, cause: error };
  if (status === 401 || status === 403) return new UnauthorizedError(options);
  if (name === "NoSuchBucket") return new NotFoundError(options);
  if (isUnparseableAnswer(error, status)) return new UpstreamProtocolError(options);
  return new InternalError(options);
}

function isUnparseableAnswer(error: unknown, status: number | undefined): boolean {
  const shape = error as SdkErrorShape | null;
  // The SDK keeps the raw response on answers it could not deserialize: a 2xx body that is not S3
  // XML, or an error body without an S3 error code (named `Error` or `Unknown`).
  if (status !== undefined && status >= 200 && status < 300) return true;
  if (error instanceof SyntaxError) return true;
  return (
    status !== undefined &&
    shape?.$response !== undefined &&
    ["Error", "Unknown", "UnknownError"].includes(s3ErrorName(error))
  );
}

/** Error for an S3 answer that parsed but lacks what the protocol promises. */
export function malformedS3Answer(
  context: Omit<S3FailureContext, "secrets">,
  reason: string,
): UpstreamProtocolError {
  return new UpstreamProtocolError({
    message: `S3 ${context.operation} on bucket '${context.bucket}' answered without ${reason}`,
    context: { operation: context.operation, bucket: context.bucket, key: context.key, reason },
  });
}
