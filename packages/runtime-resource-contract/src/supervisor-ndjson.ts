import { concatBytes } from "./bytes.js";
import { createError } from "./errors/error-classes.js";
import { parseRecord } from "./errors/parse-record.js";
import {
  type HarnessSupervisorChannel,
  type HarnessSupervisorCommand,
  type HarnessSupervisorEvent,
  harnessSupervisorCommandSchema,
  harnessSupervisorEventSchema,
} from "./supervisor.js";

/** Default longest accepted event line, in bytes, excluding the line break. */
export const DEFAULT_SUPERVISOR_MAX_LINE_BYTES = 1024 * 1024;

/** Options of {@link createNdjsonSupervisorChannel}. */
export interface NdjsonSupervisorChannelOptions {
  /** The supervisor's stdin: commands are written here, one JSON object per line. */
  readonly stdin: WritableStream<Uint8Array>;
  /** The supervisor's stdout: events are read from here, one JSON object per line. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Ends the supervisor process. Called once by `close()`, after both streams are closed. */
  readonly close: () => Promise<void>;
  /** Longest accepted event line in bytes; a longer line fails the iteration with `limit_exceeded`. @default 1 MiB */
  readonly maxLineBytes?: number;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Speaks `openma-harness-supervisor-v1` over a byte duplex: commands are validated and written as one
 * JSON object per line; every event line (LF or CRLF terminated, split across chunks in any way) is
 * parsed with the event schema. A malformed line, invalid UTF-8 or an unknown event fails the iteration
 * with `upstream_protocol`; a line longer than `maxLineBytes` fails it with `limit_exceeded`.
 */
export function createNdjsonSupervisorChannel(
  options: NdjsonSupervisorChannelOptions,
): HarnessSupervisorChannel {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_SUPERVISOR_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes <= 0) {
    throw createError("invalid_config", {
      message: "invalid supervisor channel options at maxLineBytes: must be a positive integer",
      context: { path: "maxLineBytes" },
    });
  }
  const encoder = new TextEncoder();
  const writer = options.stdin.getWriter();
  let writeTail: Promise<void> = Promise.resolve();
  let closed = false;
  let consumed = false;
  let closing: Promise<void> | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  return {
    send(command: HarnessSupervisorCommand): Promise<void> {
      if (closed) return Promise.reject(closedError());
      const valid = parseRecord(harnessSupervisorCommandSchema, command, {
        record: "supervisor command",
      });
      const line = encoder.encode(`${JSON.stringify(valid)}\n`);
      // Writes are chained so concurrent sends never interleave bytes of two lines.
      const write = writeTail.then(() => {
        if (closed) throw closedError();
        return writer.write(line);
      });
      writeTail = write.catch(() => undefined);
      return write;
    },

    events(signal: AbortSignal): AsyncIterable<HarnessSupervisorEvent> {
      if (consumed)
        throw createError("invalid_request", { message: "supervisor events are consumable once" });
      consumed = true;
      reader = options.stdout.getReader();
      return readEvents(reader, signal, maxLineBytes);
    },

    close(): Promise<void> {
      closing ??= (async () => {
        closed = true;
        await writeTail;
        await writer.close().catch(() => undefined);
        await cancelStdout(reader, options.stdout);
        await options.close();
      })();
      return closing;
    },
  };
}

/** Cancels stdout through the live reader, or directly once the reader released its lock. */
async function cancelStdout(
  reader: ReadableStreamDefaultReader<Uint8Array> | null,
  stdout: ReadableStream<Uint8Array>,
): Promise<void> {
  try {
    if (reader) return await reader.cancel();
  } catch {
    // The reader released its lock when iteration ended; the stream itself is cancelled below.
  }
  await stdout.cancel().catch(() => undefined);
}

async function* readEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal,
  maxLineBytes: number,
): AsyncGenerator<HarnessSupervisorEvent> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let lineNumber = 0;
  try {
    for (;;) {
      if (signal.aborted) throw abortedError();
      const { done, value } = await reader.read();
      if (signal.aborted) throw abortedError();
      if (done) break;
      let start = 0;
      for (
        let index = value.indexOf(NEWLINE);
        index !== -1;
        index = value.indexOf(NEWLINE, start)
      ) {
        const line = concatBytes([...pending, value.subarray(start, index)]);
        pending = [];
        pendingBytes = 0;
        start = index + 1;
        lineNumber += 1;
        checkLength(contentLength(line), maxLineBytes, lineNumber);
        const event = parseLine(line, decoder, lineNumber);
        if (event) yield event;
      }
      if (start < value.byteLength) {
        pending.push(value.subarray(start));
        pendingBytes += value.byteLength - start;
        // A carriage return may still precede the next line feed, so allow one extra byte.
        checkLength(pendingBytes - 1, maxLineBytes, lineNumber + 1);
      }
    }
    if (pendingBytes > 0) {
      const last = concatBytes(pending);
      checkLength(contentLength(last), maxLineBytes, lineNumber + 1);
      const event = parseLine(last, decoder, lineNumber + 1);
      if (event) yield event;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}

/** Line length without a trailing carriage return. */
function contentLength(bytes: Uint8Array): number {
  return bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === CARRIAGE_RETURN
    ? bytes.byteLength - 1
    : bytes.byteLength;
}

function parseLine(
  bytes: Uint8Array,
  decoder: InstanceType<typeof TextDecoder>,
  lineNumber: number,
): HarnessSupervisorEvent | null {
  let text: string;
  try {
    text = decoder.decode(bytes.subarray(0, contentLength(bytes)));
  } catch (error) {
    throw protocolError(
      `supervisor event line ${lineNumber} is not valid UTF-8`,
      lineNumber,
      error,
    );
  }
  if (text.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw protocolError(`supervisor event line ${lineNumber} is not JSON`, lineNumber, error);
  }
  return parseRecord(harnessSupervisorEventSchema, value, {
    record: `supervisor event (line ${lineNumber})`,
    code: "upstream_protocol",
  });
}

function checkLength(bytes: number, maxLineBytes: number, lineNumber: number): void {
  if (bytes > maxLineBytes) {
    throw createError("limit_exceeded", {
      message: `supervisor event line ${lineNumber} exceeds ${maxLineBytes} bytes`,
      context: { limit: maxLineBytes, line: lineNumber },
    });
  }
}

function protocolError(message: string, lineNumber: number, cause: unknown) {
  return createError("upstream_protocol", { message, context: { line: lineNumber }, cause });
}

function closedError() {
  return createError("invalid_request", { message: "supervisor channel is closed" });
}

function abortedError() {
  return createError("aborted", { message: "supervisor event stream aborted" });
}
