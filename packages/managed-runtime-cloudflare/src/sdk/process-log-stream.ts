import { UpstreamProtocolError } from "@open-managed-agents/runtime-resource-contract";
import { createParser } from "eventsource-parser";
import * as z from "zod";
import type { CloudflareProcessLogEvent } from "../sandbox/cloudflare-sandbox.js";

/** A frame of the container's process log stream (`data: <json>` per event, no `event:` lines). */
const logFrameSchema = z
  .object({
    type: z.string().min(1),
    data: z.string().optional(),
    exitCode: z.number().int().nullable().optional(),
    error: z.string().optional(),
  })
  .passthrough();

/** Largest SSE frame accepted; a frame past it means the stream is not what the SDK promised. */
const MAX_FRAME_CHARS = 16 * 1024 * 1024;

/**
 * Parses the SSE bytes of `streamProcessLogs` into log events (`eventsource-parser` splits the frames).
 * `process_info` frames are skipped, an `error` frame fails the iteration with `upstream_protocol`, and
 * the iteration ends after `exit`. Cancelling (the signal, or leaving the loop) cancels the underlying stream.
 */
export async function* parseProcessLogStream(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<CloudflareProcessLogEvent> {
  const reader = stream.getReader();
  const onAbort = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  const payloads: string[] = [];
  let oversized = false;
  const parser = createParser({
    maxBufferSize: MAX_FRAME_CHARS,
    onEvent: (message) => {
      if (message.data.length > MAX_FRAME_CHARS) oversized = true;
      else payloads.push(message.data);
    },
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") oversized = true;
    },
  });
  try {
    for (;;) {
      if (signal.aborted) return;
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      for (const payload of payloads.splice(0)) {
        const event = toEvent(payload);
        if (event === null) continue;
        yield event;
        if (event.type === "exit") return;
      }
      if (oversized)
        throw new UpstreamProtocolError({
          message: "process log stream sent a frame longer than 16 MiB",
        });
      if (done) return;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}

function toEvent(payload: string): CloudflareProcessLogEvent | null {
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch (error) {
    throw new UpstreamProtocolError({
      message: "process log stream sent a frame that is not JSON",
      cause: error,
    });
  }
  const parsed = logFrameSchema.safeParse(json);
  if (!parsed.success)
    throw new UpstreamProtocolError({
      message: "process log stream sent a malformed frame",
      cause: parsed.error,
    });
  const frame = parsed.data;
  if (frame.type === "stdout" || frame.type === "stderr")
    return { type: frame.type, data: frame.data ?? "" };
  if (frame.type === "exit") return { type: "exit", exitCode: frame.exitCode ?? null };
  if (frame.type === "error")
    throw new UpstreamProtocolError({
      message: `process log stream failed: ${frame.error ?? frame.data ?? "unknown error"}`,
    });
  return null;
}
