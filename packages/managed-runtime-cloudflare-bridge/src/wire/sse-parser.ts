import {
  LimitExceededError,
  UpstreamProtocolError,
} from "@open-managed-agents/runtime-resource-contract";
import { type EventSourceMessage, type ParseError, createParser } from "eventsource-parser";

/** One dispatched server-sent event. */
export interface SseFrame {
  /** The `event:` field; `message` when absent, as the SSE specification says. */
  readonly event: string;
  /** `data:` lines joined with `\n`. */
  readonly data: string;
}

/** Limits of {@link parseSseStream}. */
export interface SseParseOptions {
  /** Largest accepted frame (sum of its data lines, in UTF-16 code units ≈ bytes for base64). */
  readonly maxFrameBytes: number;
  readonly signal?: AbortSignal;
}

/** Room for one line's field name and separator on top of the frame's data. */
const LINE_OVERHEAD = 64;

/**
 * Parses a `text/event-stream` body incrementally with `eventsource-parser` (the WHATWG algorithm: LF,
 * CRLF and CR line endings, multi-line data, comments, unknown fields). Bytes are decoded here, strictly:
 * invalid UTF-8 is `upstream_protocol`. A frame over `maxFrameBytes` is `limit_exceeded`, raised while it
 * is still arriving (the parser bounds its buffered data); the stream is cancelled so the peer stops sending.
 */
export async function* parseSseStream(
  body: ReadableStream<Uint8Array>,
  options: SseParseOptions,
): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const frames: SseFrame[] = [];
  let failure: Error | null = null;
  const parser = createParser({
    maxBufferSize: options.maxFrameBytes + LINE_OVERHEAD,
    onEvent: (message: EventSourceMessage) => {
      // A frame that arrived whole inside one chunk is never buffered, so the parser's bound does not see it.
      if (message.data.length > options.maxFrameBytes)
        failure ??= new Error("frame data over the limit");
      else frames.push({ event: message.event || "message", data: message.data });
    },
    // Unknown fields and bad retry values are ignored, as the specification says; only the size bound fails.
    onError: (error: ParseError) => {
      if (error.type === "max-buffer-size-exceeded") failure ??= error;
    },
  });
  let finished = false;
  let lastChunkEndedInCr = false;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason;
      const { value, done } = await reader.read();
      let text: string;
      try {
        text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      } catch (error) {
        throw new UpstreamProtocolError({
          message: "event stream is not valid UTF-8",
          cause: error,
        });
      }
      parser.feed(text);
      // The parser waits for the byte after a CR (it may be the LF of a CRLF); at the end there is none.
      if (done && lastChunkEndedInCr) parser.feed("\n");
      lastChunkEndedInCr = text === "" ? lastChunkEndedInCr : text.endsWith("\r");
      if (failure) {
        throw new LimitExceededError({
          message: `event-stream frame exceeds ${options.maxFrameBytes} bytes`,
          context: { limit: "maxFrameBytes", maxFrameBytes: options.maxFrameBytes },
          cause: failure,
        });
      }
      yield* frames.splice(0);
      // A frame not closed by a blank line is discarded, as the SSE specification says: no final flush.
      if (done) {
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
