import {
  AbortedError,
  ManagedRuntimeError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";

/** `fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:8787)`: the fetch error and the socket error behind it. */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (!(cause instanceof Error)) return error.message;
  const code = (cause as { code?: unknown }).code;
  return `${error.message} (${typeof code === "string" ? `${code}: ` : ""}${cause.message})`;
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
