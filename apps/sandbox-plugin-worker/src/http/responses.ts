import {
  InternalError,
  ManagedRuntimeError,
  type ManagedRuntimeErrorJSON,
} from "@open-managed-agents/runtime-resource-contract";
import { PROTOCOL_HEADER, PROTOCOL_VERSION } from "../protocol/constants.js";

/** A JSON answer. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

/** Any thrown value as a typed error; unknown failures become `internal` without leaking their text. */
export function toManagedError(error: unknown): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  return new InternalError({ message: "the Worker failed unexpectedly", cause: error });
}

/** An error answer `{code, message, context?}` with the status of its code. */
export function errorResponse(error: unknown): Response {
  const managed = toManagedError(error);
  return jsonResponse(managed.httpStatus, managed.toJSON());
}

/** An error that crossed a Durable Object call in its wire form, answered with the status of its code. */
export function wireErrorResponse(error: ManagedRuntimeErrorJSON): Response {
  return errorResponse(ManagedRuntimeError.fromJSON(error));
}

/** Adds the protocol header; responses from `fetch` have immutable headers, so they are rewrapped. */
export function withProtocolHeader(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.set(PROTOCOL_HEADER, String(PROTOCOL_VERSION));
  if (response.webSocket)
    return new Response(null, {
      status: response.status,
      statusText: response.statusText,
      headers,
      webSocket: response.webSocket,
    });
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
