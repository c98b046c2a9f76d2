import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { findRoute } from "../../src/http/router.js";
import { type ExecStreamEvent, ndjsonStream } from "../../src/protocol/ndjson.js";
import { streamLineSchema } from "../../src/protocol/schemas.js";
import { commandLine } from "../../src/sandbox/command-line.js";

const mapError = (error: unknown) =>
  new SandboxFailedError({ message: error instanceof Error ? error.message : String(error) });

async function* events(
  list: ExecStreamEvent[],
  failAfter?: Error,
): AsyncGenerator<ExecStreamEvent> {
  for (const event of list) yield event;
  if (failAfter) throw failAfter;
}

async function framed(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("NDJSON framing", () => {
  it("writes one JSON object per line, skips start events and ends with the exit line", async () => {
    const text = await framed(
      ndjsonStream(
        events([
          { type: "start" },
          { type: "stdout", data: "line one\nline two\n" },
          { type: "stderr", data: "ünïcode ✓" },
          { type: "complete", exitCode: 124 },
          { type: "stdout", data: "never sent" },
        ]),
        { timeoutGiven: true, mapError },
      ),
    );
    expect(text.endsWith("\n")).toBe(true);
    const lines = text
      .slice(0, -1)
      .split("\n")
      .map((line) => streamLineSchema.parse(JSON.parse(line)));
    expect(lines).toEqual([
      { type: "stdout", data: "line one\nline two\n" },
      { type: "stderr", data: "ünïcode ✓" },
      { type: "exit", exitCode: 124, timedOut: true },
    ]);
  });

  it("ends with an error line when the source fails, reports an error event, or ends without completing", async () => {
    const failed = await framed(
      ndjsonStream(events([{ type: "stdout", data: "a" }], new Error("connection lost")), {
        timeoutGiven: false,
        mapError,
      }),
    );
    expect(
      failed
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { type: "stdout", data: "a" },
      { type: "error", code: "sandbox_failed", message: "connection lost" },
    ]);
    const reported = await framed(
      ndjsonStream(events([{ type: "error", error: "exec failed" }]), {
        timeoutGiven: false,
        mapError,
      }),
    );
    expect(JSON.parse(reported)).toEqual({
      type: "error",
      code: "sandbox_failed",
      message: "exec failed",
    });
    const cut = await framed(ndjsonStream(events([]), { timeoutGiven: false, mapError }));
    expect(JSON.parse(cut)).toMatchObject({ type: "error", code: "sandbox_failed" });
  });

  it("cancelling the answer stops the event source", async () => {
    let finished = false;
    async function* endless(): AsyncGenerator<ExecStreamEvent> {
      try {
        for (;;) yield { type: "stdout", data: "x" };
      } finally {
        finished = true;
      }
    }
    const reader = ndjsonStream(endless(), { timeoutGiven: false, mapError }).getReader();
    await reader.read();
    await reader.cancel();
    expect(finished).toBe(true);
  });
});

describe("routing and command lines", () => {
  const routes = [
    { method: "GET", pattern: "/adapter/v1/sandboxes/:id", handler: async () => new Response() },
    {
      method: "*",
      pattern: "/adapter/v1/sandboxes/:id/ports/:port/*rest",
      handler: async () => new Response(),
    },
  ];

  it("matches parameters and keeps a port route's remainder as sent", () => {
    expect(findRoute(routes, "GET", "/adapter/v1/sandboxes/a%20b")?.params).toEqual({ id: "a b" });
    expect(findRoute(routes, "POST", "/adapter/v1/sandboxes/s/ports/8080/x/y/")?.params).toEqual({
      id: "s",
      port: "8080",
      rest: "/x/y/",
    });
    expect(findRoute(routes, "PUT", "/adapter/v1/sandboxes/s/ports/8080")?.params).toEqual({
      id: "s",
      port: "8080",
      rest: "/",
    });
    expect(findRoute(routes, "DELETE", "/adapter/v1/sandboxes/s")).toBeUndefined();
    expect(findRoute(routes, "GET", "/adapter/v1/sandboxes/s/extra")).toBeUndefined();
    expect(findRoute(routes, "GET", "/adapter/v1/sandboxes/%E0%A4%A")).toBeUndefined();
  });

  it("quotes every argument and wraps a deadline in coreutils timeout", () => {
    expect(commandLine({ argv: ["echo", "it's", "$HOME", "a b"] })).toBe(
      `'echo' 'it'\\''s' '$HOME' 'a b'`,
    );
    expect(commandLine({ argv: ["sleep", "5"], timeoutMs: 1_500 })).toBe(
      `timeout -k 5 1.5s 'sleep' '5'`,
    );
  });
});
