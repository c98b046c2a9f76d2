import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { parseSseStream } from "../src/wire/sse-parser.js";

function streamOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(chunks: readonly (string | Uint8Array)[], maxFrameBytes = 1024 * 1024) {
  const frames = [];
  for await (const frame of parseSseStream(streamOf(chunks), { maxFrameBytes })) frames.push(frame);
  return frames;
}

const SAMPLE =
  'event: stdout\ndata: aGkK\n\nevent: stderr\ndata: ZXJyCg==\n\n: comment\nevent: exit\ndata: {"exit_code":3}\n\n';
const EXPECTED = [
  { event: "stdout", data: "aGkK" },
  { event: "stderr", data: "ZXJyCg==" },
  { event: "exit", data: '{"exit_code":3}' },
];

describe("parseSseStream", () => {
  it("parses LF frames with comments", async () => {
    expect(await collect([SAMPLE])).toEqual(EXPECTED);
  });

  it("parses CRLF and CR line endings", async () => {
    expect(await collect([SAMPLE.replace(/\n/g, "\r\n")])).toEqual(EXPECTED);
    expect(await collect([SAMPLE.replace(/\n/g, "\r")])).toEqual(EXPECTED);
  });

  it("gives the same frames whatever the chunk boundaries, CRLF pairs and multibyte characters included", async () => {
    const text = `${SAMPLE.replace(/\n/g, "\r\n")}event: note\ndata: héllo ✓\n\n`;
    const bytes = new TextEncoder().encode(text);
    const whole = await collect([bytes]);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await collect([bytes.slice(0, cut), bytes.slice(cut)])).toEqual(whole);
    }
    expect(await collect([...bytes].map((byte) => Uint8Array.of(byte)))).toEqual(whole);
  });

  it("joins multi-line data with newlines and defaults the event name", async () => {
    expect(await collect(["data: one\ndata:two\ndata\n\n"])).toEqual([
      { event: "message", data: "one\ntwo\n" },
    ]);
  });

  it("discards a final frame that is not closed by a blank line", async () => {
    expect(
      await collect(['event: stdout\ndata: aGkK\n\nevent: exit\ndata: {"exit_code":0}\n']),
    ).toEqual([{ event: "stdout", data: "aGkK" }]);
  });

  it("refuses a frame larger than the limit with limit_exceeded", async () => {
    const big = `event: stdout\ndata: ${"A".repeat(10 * 1024 * 1024)}\n\n`;
    const error = await collect([big], 8 * 1024 * 1024).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "limit_exceeded")).toBe(true);
  });

  it("refuses invalid UTF-8 with upstream_protocol", async () => {
    const error = await collect([
      Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a),
    ]).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "upstream_protocol")).toBe(true);
  });
});
