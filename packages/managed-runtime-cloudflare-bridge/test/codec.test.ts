import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createByteReader } from "@open-managed-agents/workspace-archive";
import { type Codec, transcode, zstdSupport } from "../src/checkpoint/codec.js";

/** Chunks of `bytes` handed out from one reused buffer, as a spool reader does. */
async function* reused(bytes: Buffer, chunk = 64 * 1024): AsyncGenerator<Buffer> {
  const buffer = Buffer.alloc(chunk);
  for (let offset = 0; offset < bytes.byteLength; offset += chunk) {
    const piece = bytes.subarray(offset, offset + chunk);
    piece.copy(buffer);
    yield buffer.subarray(0, piece.byteLength);
    // Whatever the consumer kept of the previous piece is overwritten now.
    buffer.fill(0xee);
  }
}

/** Digest of a stream whose pieces are only valid until the next is asked for. */
async function digestOf(pieces: AsyncIterable<Buffer>): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const piece of pieces) {
    hash.update(piece);
    size += piece.byteLength;
  }
  return { sha256: hash.digest("hex"), size };
}

const text = Buffer.from(
  Array.from(
    { length: 60_000 },
    (_, index) => `line ${index} of a text that compresses well\n`,
  ).join(""),
);
const noise = randomBytes(3 * 1024 * 1024 + 17);
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("transcode", () => {
  it("finds zstd on this host (Node's zlib or the zstd command with mkfifo)", async () => {
    // The local stack's containers have zstd; the driver's side is what this checks.
    expect(await zstdSupport()).not.toBeNull();
  });

  it.each(["zstd", "gzip", "none"] as const)(
    "round-trips %s from and to sources that reuse their buffers",
    async (codec: Codec) => {
      for (const bytes of [text, noise, Buffer.alloc(0)]) {
        const encoded: Buffer[] = [];
        for await (const piece of transcode(reused(bytes), codec, "encode"))
          encoded.push(Buffer.from(piece));
        const packed = Buffer.concat(encoded);
        if (codec !== "none" && bytes === text)
          expect(packed.byteLength).toBeLessThan(bytes.byteLength / 4);
        expect(await digestOf(transcode(reused(packed, 4096), codec, "decode"))).toEqual({
          sha256: sha(bytes),
          size: bytes.byteLength,
        });
      }
    },
  );

  it("decodes what the zstd and gzip commands wrote", async () => {
    for (const [codec, command] of [
      ["zstd", ["zstd", "-1", "-q", "-c"]],
      ["gzip", ["gzip", "-1", "-c"]],
    ] as const) {
      const packed = execFileSync(command[0], command.slice(1), {
        input: text,
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(await digestOf(transcode(reused(packed), codec, "decode")), codec).toEqual({
        sha256: sha(text),
        size: text.byteLength,
      });
    }
  });

  it("fails on a stream that does not decode, and on a stream cut short", async () => {
    const packed = execFileSync("zstd", ["-1", "-q", "-c"], {
      input: noise,
      maxBuffer: 64 * 1024 * 1024,
    });
    for (const codec of ["zstd", "gzip"] as const) {
      await expect(
        digestOf(transcode(reused(randomBytes(100_000)), codec, "decode")),
      ).rejects.toThrow();
    }
    await expect(
      digestOf(transcode(reused(packed.subarray(0, packed.byteLength >> 1)), "zstd", "decode")),
    ).rejects.toThrow();
  });

  it("refuses a zstd stream that asks for a window larger than the driver allows", async () => {
    // --long=27 asks for a 128 MiB window: far above what the fastest levels use.
    const packed = execFileSync("zstd", ["-1", "--long=27", "-q", "-c"], {
      input: Buffer.concat([noise, noise]),
      maxBuffer: 64 * 1024 * 1024,
    });
    await expect(digestOf(transcode(reused(packed), "zstd", "decode"))).rejects.toThrow(
      /zstd|window|memory/i,
    );
  });

  it("stops its process when the reader leaves early", async () => {
    const before = zstdChildren();
    for await (const piece of transcode(
      reused(Buffer.concat([noise, noise, noise])),
      "zstd",
      "encode",
    )) {
      expect(piece.byteLength).toBeGreaterThan(0);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(zstdChildren()).toBe(before);
  });

  it("stops its process when a byte reader over it is closed early, as a refused checkpoint does", async () => {
    const before = zstdChildren();
    const encoded = execFileSync("zstd", ["-1", "-q", "-c"], {
      input: Buffer.concat([noise, noise, noise]),
      maxBuffer: 64 * 1024 * 1024,
    });
    const reader = createByteReader(transcode(reused(encoded), "zstd", "decode"));
    expect((await reader.read(1024))?.byteLength).toBe(1024);
    await reader.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(zstdChildren()).toBe(before);
  });
});

/** zstd processes started by this test process: a count over the whole machine would see other runs' zstd. */
function zstdChildren(): string {
  return execFileSync("sh", ["-c", `pgrep -c -x -P ${process.pid} zstd || true`])
    .toString()
    .trim();
}
