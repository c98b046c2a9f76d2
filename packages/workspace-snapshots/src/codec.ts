import { spawn } from "node:child_process";
import { once } from "node:events";
import * as zlib from "node:zlib";
import { childEnvironment } from "@open-managed-agents/runtime-utils/node";

/** How bytes travel between this process and a sandbox. */
export type Codec = "zstd" | "gzip" | "none";

/** Largest window a zstd stream from a sandbox may ask for: a larger one fails instead of growing this process. */
const ZSTD_MAX_WINDOW = 2 ** 23;

let zstdHere: Promise<boolean> | undefined;

/** How bytes should travel, as the options say it. */
export type Compression = "auto" | "gzip" | "off";

/**
 * The codec of a transfer: zstd when asked for `auto` and both this process and the sandbox have it (the
 * sandbox's scripts report it in their first run), else gzip; nothing when compression is off.
 */
export async function pickCodec(compression: Compression, sandboxHasZstd: boolean): Promise<Codec> {
  if (compression === "off") return "none";
  if (compression === "gzip" || !sandboxHasZstd) return "gzip";
  return (await localZstd()) ? "zstd" : "gzip";
}

/** Whether this process can run `zstd` (found once per process). */
export function localZstd(): Promise<boolean> {
  zstdHere ??= new Promise((resolve) => {
    const child = spawn("zstd", ["--version"], { env: childEnvironment(), stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("close", (code) => resolve(code === 0));
  });
  return zstdHere;
}

/** `source` decoded from, or encoded with, `codec` at its fastest level, as it streams. */
export async function* transcode(
  source: AsyncIterable<Uint8Array>,
  codec: Codec,
  direction: "decode" | "encode",
): AsyncGenerator<Uint8Array> {
  if (codec === "none") {
    yield* source;
    return;
  }
  if (codec === "gzip") {
    const transform =
      direction === "decode"
        ? zlib.createGunzip()
        : zlib.createGzip({ level: zlib.constants.Z_BEST_SPEED });
    yield* through(source, transform, transform, null);
    return;
  }
  const args =
    direction === "decode" ? ["-d", "-q", "-c", `--memory=${ZSTD_MAX_WINDOW}`] : ["-1", "-q", "-c"];
  const child = spawn("zstd", args, { env: childEnvironment(), stdio: ["pipe", "pipe", "ignore"] });
  const exited = once(child, "close").then(([code]) => code as number | null);
  yield* through(source, child.stdin, child.stdout, exited);
  child.kill();
}

async function* through(
  source: AsyncIterable<Uint8Array>,
  input: NodeJS.WritableStream & { destroy(error?: Error): void },
  output: NodeJS.ReadableStream & { destroy(error?: Error): void },
  exited: Promise<number | null> | null,
): AsyncGenerator<Uint8Array> {
  // A failed write reaches the feeding loop through its callback (and the consumer through `output`).
  input.on("error", () => undefined);
  // Each chunk is handed on whole before the next is asked for: the source may fill its buffer again.
  const feeding = (async () => {
    for await (const chunk of source)
      await new Promise<void>((resolve, reject) =>
        input.write(chunk, (error) => (error ? reject(error) : resolve())),
      );
    input.end();
  })();
  feeding.catch((error: unknown) =>
    output.destroy(error instanceof Error ? error : new Error(String(error))),
  );
  try {
    for await (const chunk of output) yield chunk as Buffer;
    await feeding;
    if (exited && (await exited) !== 0) throw new Error("zstd failed on the stream");
  } finally {
    input.destroy();
    output.destroy();
  }
}
