import { spawn } from "node:child_process";
import { childEnvironment } from "@open-managed-agents/runtime-utils/node";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Transform } from "node:stream";
import * as zlib from "node:zlib";
import { fifoFilter } from "./fifo-filter.js";

/** How bytes travel between the driver and a sandbox. */
export type Codec = "zstd" | "gzip" | "none";

/** Output chunk size of zlib's codecs: fewer, larger chunks to slice. */
const OUTPUT_CHUNK_BYTES = 256 * 1024;
/**
 * Largest window a zstd stream from a sandbox may ask for. `zstd -1` to `-3` use 512 KiB to 2 MiB; a larger
 * request (a hostile stream asking for gigabytes) fails the transfer instead of growing the driver.
 */
const ZSTD_MAX_WINDOW_LOG = 23;

/** How this process handles zstd: Node's own zlib (Node ≥ 22.15), the `zstd` command, or not at all. */
export type ZstdSupport = "zlib" | "command" | null;

type ZstdZlib = typeof zlib & {
  createZstdDecompress?: (options?: object) => Transform;
  createZstdCompress?: (options?: object) => Transform;
  constants: typeof zlib.constants & {
    ZSTD_d_windowLogMax?: number;
    ZSTD_c_compressionLevel?: number;
  };
};

let support: Promise<ZstdSupport> | undefined;

/**
 * Whether the driver can handle zstd, found once per process: Node's zlib when it has zstd, else a `zstd`
 * command on PATH (run as a filter process, so its buffers are not the driver's; `mkfifo` carries its output),
 * else none, in which case transfers use gzip.
 */
export function zstdSupport(): Promise<ZstdSupport> {
  if ((zlib as ZstdZlib).createZstdDecompress) return Promise.resolve("zlib");
  support ??= Promise.all([succeeds("zstd", ["--version"]), canMakeFifo()]).then(([zstd, fifo]) =>
    zstd && fifo ? "command" : null,
  );
  return support;
}

function succeeds(command: string, args: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { env: childEnvironment(), stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("close", (code) => resolve(code === 0));
  });
}

/** Whether `mkfifo` makes a named pipe here (tried once, in a folder of its own). */
async function canMakeFifo(): Promise<boolean> {
  const directory = await mkdtemp(join(tmpdir(), "oma-bridge-fifo-probe-"));
  try {
    return await succeeds("mkfifo", [join(directory, "probe")]);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * `source` decoded from, or encoded with, `codec` (at its fastest level) as it streams, never a whole archive
 * in memory. Each piece yielded is valid until the next is asked for; `source` may reuse its buffers, since a
 * chunk is handed over (and taken) before the next is read. A stream that does not decode fails the iteration.
 */
export async function* transcode(
  source: AsyncIterable<Uint8Array>,
  codec: Codec,
  direction: "decode" | "encode",
): AsyncGenerator<Buffer> {
  if (codec === "none") {
    for await (const chunk of source)
      yield Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    return;
  }
  const how = codec === "zstd" ? await zstdSupport() : null;
  if (codec === "zstd" && how === "command") {
    const args =
      direction === "decode"
        ? ["-d", "-q", "-f", "--no-sparse", `--memory=${2 ** ZSTD_MAX_WINDOW_LOG}`]
        : ["-1", "-q", "-f"];
    yield* fifoFilter("zstd", args, source);
    return;
  }
  if (codec === "zstd" && how !== "zlib") throw new Error("zstd is not available to the driver");
  yield* throughZlib(source, zlibTransform(codec, direction));
}

function zlibTransform(codec: "zstd" | "gzip", direction: "decode" | "encode"): Transform {
  const z = zlib as ZstdZlib;
  if (codec === "gzip") {
    return direction === "decode"
      ? zlib.createGunzip({ chunkSize: OUTPUT_CHUNK_BYTES })
      : zlib.createGzip({ level: zlib.constants.Z_BEST_SPEED, chunkSize: OUTPUT_CHUNK_BYTES });
  }
  if (direction === "decode" && z.createZstdDecompress) {
    return z.createZstdDecompress({
      chunkSize: OUTPUT_CHUNK_BYTES,
      params: { [z.constants.ZSTD_d_windowLogMax as number]: ZSTD_MAX_WINDOW_LOG },
    });
  }
  if (direction === "encode" && z.createZstdCompress) {
    return z.createZstdCompress({
      chunkSize: OUTPUT_CHUNK_BYTES,
      params: { [z.constants.ZSTD_c_compressionLevel as number]: 1 },
    });
  }
  throw new Error("zstd is not available to the driver");
}

/** Feeds `source` through a zlib transform (each chunk once the previous was taken) and yields its output. */
async function* throughZlib(
  source: AsyncIterable<Uint8Array>,
  transform: Transform,
): AsyncGenerator<Buffer> {
  const feeding = (async () => {
    for await (const chunk of source) {
      await new Promise<void>((resolve, reject) =>
        transform.write(chunk, (error) => (error ? reject(error) : resolve())),
      );
    }
    transform.end();
  })();
  feeding.catch((error: unknown) =>
    transform.destroy(error instanceof Error ? error : new Error(String(error))),
  );
  try {
    yield* transform as AsyncIterable<Buffer>;
    await feeding;
  } finally {
    transform.destroy();
  }
}
