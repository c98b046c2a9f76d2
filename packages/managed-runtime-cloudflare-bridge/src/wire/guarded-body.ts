import {
  AbortedError,
  ManagedRuntimeError,
  UnavailableError,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";

/** `fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:8787)`: the fetch error and the socket error behind it. */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (!(cause instanceof Error)) return error.message;
  const code = (cause as { code?: unknown }).code;
  return `${error.message} (${typeof code === "string" ? `${code}: ` : ""}${cause.message})`;
}

/** Socket codes of a connection that was open and then closed or reset by the other side. */
const CLOSED_CONNECTION_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);
/** Codes of a connection that was never made (refused, no route, no address): nothing reached the bridge. */
const REFUSED_CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

function socketCode(error: unknown): string | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause instanceof Error ? (cause as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** Whether a fetch failed because the bridge closed a connection it had accepted, not because none was made. */
const isClosedConnection = (error: unknown): boolean =>
  CLOSED_CONNECTION_CODES.has(socketCode(error) ?? "");

/** Whether a fetch failed before any connection was made, so the bridge cannot have seen the request. */
export const wasRefused = (error: unknown): boolean =>
  REFUSED_CONNECTION_CODES.has(socketCode(error) ?? "");

/**
 * The error of a bridge request that got no answer. A connection refused or never made is the bridge
 * unreachable; a connection the bridge closed or reset after the request went out (the Worker killed or
 * restarted while it was about to answer) is the bridge going away before answering. Both name the bridge.
 * `secrets` are redacted from the message (a network error may quote a URL or header). `unsent` (in the
 * context as `unsent: true`) says that no attempt of the call reached the bridge: every one was refused.
 */
export function requestFailure(
  operation: string,
  error: unknown,
  secrets: readonly string[] = [],
  unsent = false,
): UnavailableError {
  const detail = describeNetworkError(error);
  const message = isClosedConnection(error)
    ? `bridge ${operation} broke off: the bridge closed the connection before answering (${detail})`
    : `bridge ${operation} unreachable: ${detail}`;
  return new UnavailableError({
    message: redactSecrets(message, secrets),
    context: { operation, ...(unsent ? { unsent: true } : {}) },
    cause: error,
  });
}

/**
 * A bridge response body whose read failures name the bridge. Node's fetch fails a body whose connection
 * closed early with a bare "terminated" or "aborted"; read on, it would surface as an internal error of
 * whatever consumed the bytes (a harness run, an archive decoder, a store's put). Here it becomes
 * `unavailable`: the bridge went away in the middle of `operation`. A caller's own abort stays `aborted`.
 */
export function guardedBody(
  operation: string,
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal | null,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream({
    type: "bytes",
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        controller.error(bodyFailure(operation, error, signal));
        return;
      }
      if (chunk.done) {
        controller.close();
        // A BYOB read waiting when the body ends is answered with no bytes.
        controller.byobRequest?.respond(0);
      } else if (chunk.value.byteLength > 0) {
        // A byte stream takes over the buffer it is given: a view into a larger (pooled) one is copied first.
        const view = chunk.value;
        controller.enqueue(
          view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : view.slice(),
        );
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function bodyFailure(
  operation: string,
  error: unknown,
  signal?: AbortSignal | null,
): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  if (signal?.aborted)
    return new AbortedError({ message: `bridge ${operation} aborted`, cause: error });
  return new UnavailableError({
    message: `bridge ${operation} broke off: the bridge closed the connection mid-response (${describeNetworkError(error)})`,
    context: { operation },
    cause: error,
  });
}
