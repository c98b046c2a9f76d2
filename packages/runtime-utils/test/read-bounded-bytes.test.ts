import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { readAllBytes, readBoundedBytes } from "../src/index.js";

/** A stream of `chunks`, recording whether it was cancelled and how many chunks were pulled. */
function chunked(chunks: readonly number[]): {
  stream: ReadableStream<Uint8Array>;
  cancelled: () => boolean;
  pulled: () => number;
} {
  let index = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[index++];
      if (size === undefined) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(index));
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled, pulled: () => index };
}

describe("readBoundedBytes", () => {
  it("reads a body within the limit whole", async () => {
    const { stream } = chunked([3, 4]);
    expect([...(await readBoundedBytes(stream, { maxBytes: 7 }))]).toEqual([1, 1, 1, 2, 2, 2, 2]);
    expect((await readBoundedBytes(null, { maxBytes: 1 })).byteLength).toBe(0);
  });

  it("refuses a longer body with limit_exceeded, cancelling it without reading the rest", async () => {
    const source = chunked([4, 4, 4, 4]);
    const error = await readBoundedBytes(source.stream, { maxBytes: 6 }).catch(
      (caught: unknown) => caught,
    );
    expect(ManagedRuntimeError.hasCode(error, "limit_exceeded")).toBe(true);
    expect(error).toMatchObject({ context: { maxBytes: 6 } });
    expect(source.cancelled()).toBe(true);
    expect(source.pulled()).toBeLessThan(4);
  });

  it("throws the caller's error for a longer body", async () => {
    await expect(
      readBoundedBytes(chunked([10]).stream, {
        maxBytes: 2,
        tooLarge: () => new RangeError("too big"),
      }),
    ).rejects.toThrow(RangeError);
  });

  it("truncates to exactly maxBytes with overflow truncate", async () => {
    const source = chunked([3, 3, 3]);
    expect([
      ...(await readBoundedBytes(source.stream, { maxBytes: 4, overflow: "truncate" })),
    ]).toEqual([1, 1, 1, 2]);
    expect(source.cancelled()).toBe(true);
  });
});

describe("readAllBytes", () => {
  it("reads a stream of any length", async () => {
    expect((await readAllBytes(chunked([1_000, 2_000, 3_000]).stream)).byteLength).toBe(6_000);
  });
});
