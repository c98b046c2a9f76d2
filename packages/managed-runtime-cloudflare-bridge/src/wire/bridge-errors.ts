import {
  type ErrorCode,
  ManagedRuntimeError,
  UpstreamProtocolError,
  createError,
} from "@open-managed-agents/runtime-resource-contract";
import { readBoundedBytes } from "@open-managed-agents/runtime-utils";
import * as z from "zod";

/** The bridge's JSON error body. */
const bridgeErrorBodySchema = z.object({ error: z.string(), code: z.string().optional() });

/** Bridge error codes and the contract codes they become. */
const BRIDGE_CODE_MAP: Readonly<Record<string, ErrorCode>> = {
  invalid_request: "invalid_request",
  unauthorized: "unauthorized",
  capacity_exceeded: "insufficient_capacity",
  payload_too_large: "limit_exceeded",
  workspace_read_not_found: "not_found",
  exec_error: "sandbox_failed",
  exec_transport_error: "sandbox_failed",
  workspace_archive_write_error: "sandbox_failed",
  workspace_archive_read_error: "sandbox_failed",
  pool_error: "sandbox_failed",
  session_error: "sandbox_failed",
  mount_error: "sandbox_failed",
  unmount_error: "sandbox_failed",
  tunnel_error: "sandbox_failed",
};

function codeForStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 404) return "not_found";
  if (status === 413) return "limit_exceeded";
  if (status === 429 || status === 503) return "insufficient_capacity";
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 504) return "timeout";
  return "sandbox_failed";
}

/** Longest upstream message copied into an error. */
const MAX_MESSAGE_CHARS = 500;

/**
 * Turns a bridge error payload into a typed error. `operation` names the bridge call (`exec`,
 * `file.read`); `status` is the HTTP status, or null for an error event inside an exec stream.
 */
export function bridgeErrorFromPayload(
  operation: string,
  status: number | null,
  payload: unknown,
): ManagedRuntimeError {
  const parsed = bridgeErrorBodySchema.safeParse(payload);
  if (!parsed.success) {
    return new UpstreamProtocolError({
      message: `bridge ${operation} failed with HTTP ${status ?? "stream"} and a body that is not a bridge error`,
      context: { operation, status },
    });
  }
  const bridgeCode = parsed.data.code ?? null;
  const code =
    (bridgeCode && BRIDGE_CODE_MAP[bridgeCode]) ||
    (status === null ? "sandbox_failed" : codeForStatus(status));
  return createError(code, {
    message: `bridge ${operation} failed: ${parsed.data.error.slice(0, MAX_MESSAGE_CHARS)}`,
    context: { operation, status, bridgeCode },
  });
}

/** Reads an error response (bounded) and returns the typed error for it. */
export async function bridgeErrorFromResponse(
  operation: string,
  response: Response,
): Promise<ManagedRuntimeError> {
  const text = await readBoundedText(response, 64 * 1024);
  let payload: unknown = null;
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.includes("json")) {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = null;
    }
  }
  if (payload === null) {
    // Unknown routes answer plain-text 404; other plain-text errors keep their status meaning.
    return createError(codeForStatus(response.status), {
      message: `bridge ${operation} failed with HTTP ${response.status}: ${text.slice(0, 200) || "(empty body)"}`,
      context: { operation, status: response.status },
    });
  }
  return bridgeErrorFromPayload(operation, response.status, payload);
}

/** Reads at most `maxBytes` of a body as text and cancels the rest. */
export async function readBoundedText(response: Response, maxBytes: number): Promise<string> {
  return new TextDecoder()
    .decode(await readBoundedBytes(response.body, { maxBytes, overflow: "truncate" }))
    .slice(0, maxBytes);
}

/** Whether an error is the bridge's 503 `capacity_exceeded`: its pool refused to start a container. */
export function isCapacityRefusal(error: unknown): boolean {
  if (!ManagedRuntimeError.isInstance(error) || error.code !== "insufficient_capacity")
    return false;
  return (
    (error.context as { bridgeCode?: unknown } | undefined)?.bridgeCode === "capacity_exceeded"
  );
}
