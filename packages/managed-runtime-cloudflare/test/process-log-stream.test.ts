import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { parseProcessLogStream } from "../src/sdk.js";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>) {
  const events = [];
  for await (const event of parseProcessLogStream(stream, new AbortController().signal))
    events.push(event);
  return events;
}

describe("process log stream parsing", () => {
  it("parses frames split across chunks, skips process_info and stops at exit", async () => {
    const events = await collect(
      streamOf(
        'data: {"type":"process_info","processId":"p"}\n\n',
        'data: {"type":"stdout","da',
        'ta":"a\\u0000b\\n"}\r\n\r\ndata: {"type":"stderr","data":"e"}\n\n',
        'data: {"type":"exit","exitCode":3}\n\ndata: {"type":"stdout","data":"after"}\n\n',
      ),
    );
    expect(events).toEqual([
      { type: "stdout", data: "a\u0000b\n" },
      { type: "stderr", data: "e" },
      { type: "exit", exitCode: 3 },
    ]);
  });

  it.each([
    ["a frame that is not JSON", "data: {nope\n\n"],
    ["a frame without a type", 'data: {"data":"x"}\n\n'],
    ["an error frame", 'data: {"type":"error","error":"boom"}\n\n'],
  ])("fails with upstream_protocol on %s", async (_label, frame) => {
    const error = await collect(streamOf(frame)).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "upstream_protocol")).toBe(true);
  });

  it("ends quietly when the stream ends without an exit frame", async () => {
    expect(await collect(streamOf('data: {"type":"stdout","data":"x"}\n\n'))).toEqual([
      { type: "stdout", data: "x" },
    ]);
  });
});
