import { LimitExceededError, UpstreamProtocolError } from "@open-managed-agents/runtime-resource-contract";

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

/**
 * Parses a `text/event-stream` body incrementally. Handles LF, CRLF and CR line endings, data split
 * across chunks at any byte (including inside a multi-byte character or a CRLF pair), multi-line data,
 * comments and unknown fields. A frame over `maxFrameBytes` is a `limit_exceeded` error; the stream is
 * cancelled so the peer stops sending.
 */
export async function* parseSseStream(body: ReadableStream<Uint8Array>, options: SseParseOptions): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let event = "";
  let data: string[] = [];
  let dataSize = 0;
  let pendingCr = false;
  let finished = false;

  const takeLine = (line: string): SseFrame | null => {
    if (line === "") {
      if (data.length === 0) {
        event = "";
        return null;
      }
      const frame = { event: event || "message", data: data.join("\n") };
      event = "";
      data = [];
      dataSize = 0;
      return frame;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") {
      dataSize += value.length + 1;
      if (dataSize > options.maxFrameBytes) {
        throw new LimitExceededError({
          message: `event-stream frame exceeds ${options.maxFrameBytes} bytes`,
          context: { limit: "maxFrameBytes", maxFrameBytes: options.maxFrameBytes },
        });
      }
      data.push(value);
    }
    return null;
  };

  // The unfinished line is kept as parts so a long line costs linear time.
  let partial: string[] = [];
  let partialLength = 0;
  const lineLimit = options.maxFrameBytes + 64;

  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason;
      const { value, done } = await reader.read();
      let text: string;
      try {
        text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      } catch (error) {
        throw new UpstreamProtocolError({ message: "event stream is not valid UTF-8", cause: error });
      }
      if (pendingCr && text.startsWith("\n")) text = text.slice(1);
      pendingCr = false;
      let start = 0;
      for (let index = 0; index < text.length; index++) {
        const char = text.charCodeAt(index);
        if (char !== 10 && char !== 13) continue;
        partial.push(text.slice(start, index));
        const line = partial.join("");
        partial = [];
        partialLength = 0;
        const frame = takeLine(line);
        if (char === 13) {
          if (index + 1 < text.length) {
            if (text.charCodeAt(index + 1) === 10) index++;
          } else {
            pendingCr = true;
          }
        }
        start = index + 1;
        if (frame) yield frame;
      }
      if (start < text.length) {
        partial.push(text.slice(start));
        partialLength += text.length - start;
        if (partialLength > lineLimit) {
          throw new LimitExceededError({
            message: `event-stream frame exceeds ${options.maxFrameBytes} bytes`,
            context: { limit: "maxFrameBytes", maxFrameBytes: options.maxFrameBytes },
          });
        }
      }
      if (done) {
        // A frame not closed by a blank line is discarded, as the SSE specification says.
        if (partialLength > 0) takeLine(partial.join(""));
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
