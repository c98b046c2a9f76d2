import type { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { TIMEOUT_EXIT_CODE } from "../sandbox/command-line.js";
import type { StreamLine } from "./schemas.js";

/** Content type of `exec/stream` answers. */
export const NDJSON_CONTENT_TYPE = "application/x-ndjson";

/** An event of the SDK's exec stream, as far as the framing needs it. */
export interface ExecStreamEvent {
  readonly type: string;
  readonly data?: string;
  readonly exitCode?: number;
  readonly error?: string;
}

const encoder = new TextEncoder();

/** One NDJSON line: the JSON of `line` and a newline. Newlines inside data are escaped by JSON. */
export function encodeLine(line: StreamLine): Uint8Array {
  return encoder.encode(`${JSON.stringify(line)}\n`);
}

/** The line for an SDK event, or null for events the protocol does not carry (`start`). */
export function lineOf(
  event: ExecStreamEvent,
  timeoutGiven: boolean,
  streamError: (message: string) => ManagedRuntimeError,
): StreamLine | null {
  switch (event.type) {
    case "stdout":
    case "stderr":
      return { type: event.type, data: event.data ?? "" };
    case "complete": {
      const exitCode = typeof event.exitCode === "number" ? event.exitCode : -1;
      return { type: "exit", exitCode, timedOut: timeoutGiven && exitCode === TIMEOUT_EXIT_CODE };
    }
    case "error": {
      const error = streamError(event.error ?? event.data ?? "the command failed");
      return { type: "error", code: error.code, message: error.message };
    }
    default:
      return null;
  }
}

/**
 * Frames SDK exec events as NDJSON bytes. The stream always ends with an `exit` or `error` line: a
 * failure while reading, or an event stream that ends without completing, becomes an `error` line.
 * Cancelling the answer cancels the event source.
 */
export function ndjsonStream(
  events: AsyncIterable<ExecStreamEvent>,
  options: {
    readonly timeoutGiven: boolean;
    readonly mapError: (error: unknown) => ManagedRuntimeError;
  },
): ReadableStream<Uint8Array> {
  const iterator = events[Symbol.asyncIterator]();
  const streamError = (message: string): ManagedRuntimeError =>
    options.mapError(new Error(message));
  let finished = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (finished) return;
      // A pull must enqueue before it returns, or the pending read is never answered: skip silent events here.
      let line: StreamLine | null = null;
      while (line === null) {
        try {
          const next = await iterator.next();
          line = next.done
            ? lineOf(
                {
                  type: "error",
                  error: "the command's output stream ended without an exit status",
                },
                false,
                streamError,
              )
            : lineOf(next.value, options.timeoutGiven, streamError);
        } catch (error) {
          const mapped = options.mapError(error);
          line = { type: "error", code: mapped.code, message: mapped.message };
        }
      }
      controller.enqueue(encodeLine(line));
      if (line.type === "exit" || line.type === "error") {
        finished = true;
        controller.close();
        await iterator.return?.();
      }
    },
    async cancel() {
      finished = true;
      await iterator.return?.();
    },
  });
}
