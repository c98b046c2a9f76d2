import type { IncomingMessage, ServerResponse } from "node:http";
import {
  ManagedRuntimeError,
  createError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import type * as z from "zod";
import type { HeartbeatPreconditionFailedError } from "../errors.js";
import {
  type PlatformErrorBody,
  type PlatformErrorType,
  platformErrorBodySchema,
} from "../wire/error-body.js";
import { newId } from "../state/ids.js";

const PLATFORM_TYPE: Partial<Record<string, PlatformErrorType>> = {
  invalid_request: "invalid_request_error",
  unauthorized: "authentication_error",
  not_found: "not_found_error",
  fence_conflict: "conflict_error",
  limit_exceeded: "invalid_request_error",
};

/** Writes `body` as JSON after checking it against its wire schema, so no response drifts from the SDK's types. */
export function sendJson<S extends z.ZodType>(
  response: ServerResponse,
  status: number,
  schema: S,
  body: z.input<S>,
): void {
  const checked = parseRecord(schema, body, { record: "response", code: "internal" });
  const text = JSON.stringify(checked);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "request-id": newId("req"),
  });
  response.end(text);
}

/** The platform's error JSON for `error` (SDK routes). Unknown failures become a 500 `api_error` without detail. */
export function platformError(error: unknown): { status: number; body: PlatformErrorBody } {
  const requestId = newId("req");
  if (ManagedRuntimeError.hasCode(error, "lease_lost") && "currentState" in error) {
    return {
      status: 412,
      body: {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: error.message,
          details: {
            error_code: "heartbeat_precondition_failed",
            current_state: (error as HeartbeatPreconditionFailedError).currentState,
          },
        },
        request_id: requestId,
      },
    };
  }
  const platformType = ManagedRuntimeError.isInstance(error)
    ? PLATFORM_TYPE[error.code]
    : undefined;
  if (ManagedRuntimeError.isInstance(error) && platformType) {
    return {
      status: error.httpStatus,
      body: {
        type: "error",
        error: { type: platformType, message: error.message, details: { error_code: error.code } },
        request_id: requestId,
      },
    };
  }
  return {
    status: 500,
    body: {
      type: "error",
      error: { type: "api_error", message: "internal error", details: { error_code: "internal" } },
      request_id: requestId,
    },
  };
}

/** Sends `error` in the platform's shape. */
export function sendPlatformError(response: ServerResponse, error: unknown): void {
  const { status, body } = platformError(error);
  if (response.headersSent) return void response.destroy();
  sendJson(response, status, platformErrorBodySchema, body);
}

/** Sends `error` as `{code, message}` (admin routes). */
export function sendAdminError(response: ServerResponse, error: unknown): void {
  const typed = ManagedRuntimeError.isInstance(error)
    ? error
    : createError("internal", { message: "internal error", cause: error });
  const text = JSON.stringify({ code: typed.code, message: typed.message });
  if (response.headersSent) return void response.destroy();
  response.writeHead(typed.httpStatus, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

/** Reads a request body up to `limit` bytes. */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw createError("limit_exceeded", {
        message: `request body exceeds ${limit} bytes`,
        context: { limit },
      });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads and parses a JSON body with `schema`; an empty body parses as `{}`. */
export async function readJson<S extends z.ZodType>(
  request: IncomingMessage,
  schema: S,
  record: string,
  limit: number,
): Promise<z.output<S>> {
  const raw = (await readBody(request, limit)).toString("utf8");
  let value: unknown = {};
  if (raw.trim() !== "") {
    try {
      value = JSON.parse(raw);
    } catch (cause) {
      throw createError("invalid_request", {
        message: `${record} is not valid JSON`,
        context: { record },
        cause,
      });
    }
  }
  return parseRecord(schema, value, { record });
}

/**
 * Parses a URL's query with `schema` the way the SDK serialises one (`qs` with `arrayFormat: "brackets"`):
 * a key ending in `[]` collects its repeated values into an array under the name without the brackets
 * (`types[]=a&types[]=b` is `{types: ["a", "b"]}`), a bracketed key such as `created_at[gt]` is a key
 * of its own, and any other key given twice is refused.
 */
export function parseQuery<S extends z.ZodType>(url: URL, schema: S, record: string): z.output<S> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    if (key.endsWith("[]")) {
      const name = key.slice(0, -2);
      const values = query[name];
      if (typeof values === "string") {
        const message = `${record}: query parameter ${name} given both as a value and as a list`;
        throw createError("invalid_request", { message, context: { record, key: name } });
      }
      query[name] = [...(values ?? []), value];
      continue;
    }
    if (key in query)
      throw createError("invalid_request", {
        message: `${record}: query parameter ${key} given twice`,
        context: { record, key },
      });
    query[key] = value;
  }
  return parseRecord(schema, query, { record });
}
