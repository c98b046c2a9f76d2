import { describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "./errors/error-classes.js";
import type { HarnessSupervisorEvent } from "./supervisor.js";
import { createNdjsonSupervisorChannel } from "./supervisor-ndjson.js";

const encoder = new TextEncoder();

/** A stdout that yields the given chunks, then ends (or stays open when `keepOpen`). */
function stdoutOf(
  chunks: readonly (string | Uint8Array)[],
  keepOpen = false,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      if (!keepOpen) controller.close();
    },
  });
}

/** A stdin that records every written chunk as text. */
function recordingStdin(): {
  stdin: WritableStream<Uint8Array>;
  written: string[];
  closed: () => boolean;
} {
  const written: string[] = [];
  let closed = false;
  const decoder = new TextDecoder();
  const stdin = new WritableStream<Uint8Array>({
    write(chunk) {
      written.push(decoder.decode(chunk));
    },
    close() {
      closed = true;
    },
  });
  return { stdin, written, closed: () => closed };
}

function channelOver(stdout: ReadableStream<Uint8Array>, maxLineBytes?: number) {
  const { stdin, written, closed } = recordingStdin();
  let closeCalls = 0;
  const channel = createNdjsonSupervisorChannel({
    stdin,
    stdout,
    close: async () => {
      closeCalls += 1;
    },
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  });
  return { channel, written, stdinClosed: closed, closeCalls: () => closeCalls };
}

async function collect(
  events: AsyncIterable<HarnessSupervisorEvent>,
): Promise<HarnessSupervisorEvent[]> {
  const out: HarnessSupervisorEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error;
}

const ready = '{"type":"ready","protocol":"openma-harness-supervisor-v1"}';

describe("createNdjsonSupervisorChannel", () => {
  it("parses events split byte by byte, with CRLF and multi-byte characters across chunks", async () => {
    const text = `${ready}\r\n{"type":"heartbeat","sequence":1}\n{"type":"error","message":"grüße ✓"}\r\n`;
    const bytes = encoder.encode(text);
    const chunks = [...bytes].map((byte) => Uint8Array.of(byte));
    const { channel } = channelOver(stdoutOf(chunks));
    const events = await collect(channel.events(new AbortController().signal));
    expect(events).toEqual([
      { type: "ready", protocol: "openma-harness-supervisor-v1" },
      { type: "heartbeat", sequence: 1 },
      { type: "error", message: "grüße ✓" },
    ]);
  });

  it("parses several lines in one chunk, skips blank lines and accepts a last line without a line break", async () => {
    const { channel } = channelOver(
      stdoutOf([`${ready}\n\n  \r\n{"type":"drained"}\n{"type":"completed","exitCode":0}`]),
    );
    const events = await collect(channel.events(new AbortController().signal));
    expect(events.map((event) => event.type)).toEqual(["ready", "drained", "completed"]);
  });

  it("fails with upstream_protocol on a line that is not JSON", async () => {
    const { channel } = channelOver(stdoutOf([`${ready}\n{not json}\n`]));
    const error = await failure(collect(channel.events(new AbortController().signal)));
    expect(error.code).toBe("upstream_protocol");
    expect(error.context.line).toBe(2);
  });

  it("fails with upstream_protocol on an event the schema refuses", async () => {
    const { channel } = channelOver(stdoutOf(['{"type":"ready","protocol":"other-v9"}\n']));
    const error = await failure(collect(channel.events(new AbortController().signal)));
    expect(error.code).toBe("upstream_protocol");
    expect(error.message).toContain("protocol");
  });

  it("fails with upstream_protocol on invalid UTF-8", async () => {
    const { channel } = channelOver(stdoutOf([Uint8Array.of(0x7b, 0xff, 0xfe, 0x7d, 0x0a)]));
    const error = await failure(collect(channel.events(new AbortController().signal)));
    expect(error.code).toBe("upstream_protocol");
    expect(error.message).toContain("UTF-8");
  });

  it("fails with limit_exceeded on an overlong line, before its line break arrives", async () => {
    const { channel } = channelOver(
      stdoutOf([`${ready}\n`, "x".repeat(40), "y".repeat(40)], true),
      64,
    );
    const events: HarnessSupervisorEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const event of channel.events(new AbortController().signal)) events.push(event);
      })(),
    );
    expect(events).toHaveLength(1);
    expect(error.code).toBe("limit_exceeded");
    expect(error.context.limit).toBe(64);
  });

  it("accepts a line exactly at the limit followed by CRLF", async () => {
    const line = `{"type":"error","message":"${"a".repeat(20)}"}`;
    const { channel } = channelOver(stdoutOf([`${line}\r`, "\n"]), line.length);
    const events = await collect(channel.events(new AbortController().signal));
    expect(events).toEqual([{ type: "error", message: "a".repeat(20) }]);
  });

  it("writes each command as one validated JSON line and never interleaves concurrent sends", async () => {
    const { channel, written } = channelOver(stdoutOf([]));
    await Promise.all([
      channel.send({ type: "drain" }),
      channel.send({ type: "checkpoint.commit", checkpointId: "cp-1" }),
      channel.send({ type: "stop", reason: "aborted" }),
    ]);
    expect(written).toEqual([
      '{"type":"drain"}\n',
      '{"type":"checkpoint.commit","checkpointId":"cp-1"}\n',
      '{"type":"stop","reason":"aborted"}\n',
    ]);
  });

  it("refuses an invalid command with invalid_request and writes nothing", async () => {
    const { channel, written } = channelOver(stdoutOf([]));
    const error = await failure(
      (async () => channel.send({ type: "checkpoint.commit", checkpointId: "" }))(),
    );
    expect(error.code).toBe("invalid_request");
    expect(written).toEqual([]);
  });

  it("lets events be consumed once", () => {
    const { channel } = channelOver(stdoutOf([]));
    channel.events(new AbortController().signal);
    expect(() => channel.events(new AbortController().signal)).toThrowError(/consumable once/);
  });

  it("ends a pending iteration with aborted when the signal fires", async () => {
    const { channel } = channelOver(stdoutOf([`${ready}\n`], true));
    const controller = new AbortController();
    const seen: HarnessSupervisorEvent[] = [];
    const pending = (async () => {
      for await (const event of channel.events(controller.signal)) {
        seen.push(event);
        controller.abort();
      }
    })();
    const error = await failure(pending);
    expect(seen).toHaveLength(1);
    expect(error.code).toBe("aborted");
  });

  it("closes once: stdin closed, stdout cancelled, close callback called once, later sends refused", async () => {
    let cancelled = false;
    const stdout = new ReadableStream<Uint8Array>({
      cancel() {
        cancelled = true;
      },
    });
    const { channel, stdinClosed, closeCalls } = channelOver(stdout);
    await Promise.all([channel.close(), channel.close()]);
    await channel.close();
    expect(stdinClosed()).toBe(true);
    expect(cancelled).toBe(true);
    expect(closeCalls()).toBe(1);
    const error = await failure(channel.send({ type: "drain" }));
    expect(error.code).toBe("invalid_request");
  });

  it("rejects a non-positive maxLineBytes with invalid_config", () => {
    expect(() => channelOver(stdoutOf([]), 0)).toThrowError(/maxLineBytes/);
  });
});
