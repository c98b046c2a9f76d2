import { spawn } from "node:child_process";
import { Duplex, PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as zlib from "node:zlib";

/** How bytes travel between the driver and a sandbox. */
export type Codec = "zstd" | "gzip" | "none";

/** Decompressed chunk size: fewer, larger chunks to slice. */
const OUTPUT_CHUNK_BYTES = 256 * 1024;
/**
 * Largest window a zstd stream from a sandbox may ask for. `zstd -1` to `-3` use 512 KiB to 2 MiB; a larger
 * request (a hostile stream asking for gigabytes) fails the transfer instead of growing the driver.
 */
const ZSTD_MAX_WINDOW_LOG = 23;

/**
 * The bytes of `readable` decoded from `codec` as they stream (never a whole archive in memory). A stream
 * that does not decode fails the iteration.
 */
export async function* decoded(readable: Readable, codec: Codec): AsyncGenerator<Buffer> {
  if (codec === "none") {
    yield* readable as AsyncIterable<Buffer>;
    return;
  }
  const transform = await decoder(codec);
  const decoding = pipeline(readable, transform);
  decoding.catch(() => undefined);
  yield* transform as AsyncIterable<Buffer>;
  await decoding;
}

/** The codec a stream's first bytes announce: zstd and gzip by their magic numbers, anything else as is. */
export function codecOf(head: Uint8Array): Codec {
  if (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return "zstd";
  if (head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  return "none";
}

/** How this process decodes and encodes zstd: Node's own zlib (Node ≥ 22.15), the `zstd` command, or not at all. */
export type ZstdSupport = "zlib" | "command" | null;

type ZstdZlib = typeof zlib & {
  createZstdDecompress?: (options?: object) => Duplex;
  createZstdCompress?: (options?: object) => Duplex;
  constants: typeof zlib.constants & { ZSTD_d_windowLogMax?: number; ZSTD_c_compressionLevel?: number };
};

let support: Promise<ZstdSupport> | undefined;

/**
 * Whether the driver can handle zstd, found once per process: Node's zlib when it has zstd, else a `zstd`
 * command on PATH (run as a filter process, so its buffers are not the driver's), else none, in which case
 * transfers use gzip.
 */
export function zstdSupport(): Promise<ZstdSupport> {
  if ((zlib as ZstdZlib).createZstdDecompress) return Promise.resolve("zlib");
  support ??= new Promise((resolve) => {
    const child = spawn("zstd", ["--version"], { stdio: "ignore" });
    child.once("error", () => resolve(null));
    child.once("close", (code) => resolve(code === 0 ? "command" : null));
  });
  return support;
}

/** A transform that decodes `codec` as bytes pass; `none` passes them through. */
export async function decoder(codec: Codec): Promise<Duplex> {
  if (codec === "gzip") return zlib.createGunzip({ chunkSize: OUTPUT_CHUNK_BYTES });
  if (codec === "none") return new PassThrough();
  const how = await zstdSupport();
  const z = zlib as ZstdZlib;
  if (how === "zlib" && z.createZstdDecompress) {
    return z.createZstdDecompress({ chunkSize: OUTPUT_CHUNK_BYTES, params: { [z.constants.ZSTD_d_windowLogMax as number]: ZSTD_MAX_WINDOW_LOG } });
  }
  if (how === "command") return filterProcess(["-d", "-c", "-q", `--memory=${2 ** ZSTD_MAX_WINDOW_LOG}`]);
  throw new Error("zstd is not available to the driver");
}

/** A transform that encodes with `codec` at its fastest level; `none` passes bytes through. */
export async function encoder(codec: Codec): Promise<Duplex> {
  if (codec === "gzip") return zlib.createGzip({ level: zlib.constants.Z_BEST_SPEED, chunkSize: OUTPUT_CHUNK_BYTES });
  if (codec === "none") return new PassThrough();
  const how = await zstdSupport();
  const z = zlib as ZstdZlib;
  if (how === "zlib" && z.createZstdCompress) return z.createZstdCompress({ chunkSize: OUTPUT_CHUNK_BYTES, params: { [z.constants.ZSTD_c_compressionLevel as number]: 1 } });
  if (how === "command") return filterProcess(["-1", "-c", "-q"]);
  throw new Error("zstd is not available to the driver");
}

/**
 * `zstd <args>` as a duplex stream: bytes written go to its stdin, its stdout is read. A non-zero exit or a
 * spawn failure fails the stream; destroying the stream kills the process.
 */
function filterProcess(args: readonly string[]): Duplex {
  const child = spawn("zstd", args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (stderr = (stderr + chunk).slice(-512)));
  // The output ends only once the process exited 0: a stream it cut short must not read as a whole one.
  const output = new PassThrough({ highWaterMark: OUTPUT_CHUNK_BYTES });
  child.stdout.pipe(output, { end: false });
  const duplex = Duplex.from({ writable: child.stdin, readable: output });
  child.once("error", (error) => duplex.destroy(error));
  child.once("close", (code, signal) => {
    if (code === 0) output.end();
    else if (!duplex.destroyed) duplex.destroy(new Error(`zstd exited with ${code ?? signal}: ${stderr.trim()}`));
  });
  duplex.once("close", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return duplex;
}
