import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createBridgeFiles } from "../runtime/files.js";
import { execCollect } from "../runtime/exec.js";
import type { MemoryBudget } from "../memory-budget.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { type Codec, transcode } from "./codec.js";

/** Options of {@link sendRestoreArchive}. */
export interface SendRestoreOptions {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly maxRequestBytes: number;
  /** Size of each file PUT. */
  readonly partBytes: number;
  /** Archives up to this size (and the request limit) go as one `/hydrate`. */
  readonly singleRequestBytes: number;
  /** Codecs the driver can encode, in preference order; the sandbox's own tools decide among them. */
  readonly codecs: readonly Codec[];
  /** Whether a sample of the contents compressed well (gzip is used only then; zstd costs little either way). */
  readonly compressible: boolean;
  /** Shell run in the sandbox once the archive is extracted, in the same exec (its failure is ignored). */
  readonly afterExtract?: string;
  /** Shared by every run: the part buffers of a send are held from it for the send's length. */
  readonly budget?: MemoryBudget;
  /**
   * Idle memory the send may build in (the assembly's pack buffers): its two part buffers when it holds two
   * parts, or a single request's archive when it holds that; otherwise the send allocates its own.
   */
  readonly scratch?: Uint8Array;
  /** Called with the archive bytes sent so far (before compression). */
  readonly onBytes?: (sent: number) => void;
  readonly signal?: AbortSignal;
}

/** Polls of the sandbox's extraction loop while it waits for the next part. */
const POLL_SECONDS = "0.02";

/**
 * Sends a tar (given as segments streamed in order) into `/workspace`. A small archive is one `/hydrate`.
 * A larger one is compressed in the driver when that pays (zstd when both ends have it, gzip when a sample of
 * the contents shrank), cut into parts written with file PUTs, and extracted by one tar in the sandbox that
 * reads each part as soon as it is whole, so uploading and extracting overlap, a file of any size needs no
 * joining, and at most two parts are in the driver's memory. The scratch folder is removed whatever happens.
 */
export async function sendRestoreArchive(segments: () => AsyncIterable<Uint8Array>, size: number, options: SendRestoreOptions): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  if (size <= options.singleRequestBytes && size <= options.maxRequestBytes) {
    const lease = await options.budget?.acquire(size, signal);
    try {
      const bytes = scratchOf(options, size) ?? Buffer.allocUnsafeSlow(size);
      let filled = 0;
      for await (const chunk of segments()) {
        bytes.set(chunk, filled);
        filled += chunk.byteLength;
      }
      await client.hydrate(sandboxId, bytes, signal);
    } finally {
      lease?.release();
    }
    options.onBytes?.(size);
    if (options.afterExtract) await files.run(options.afterExtract, signal).catch(() => undefined);
    return;
  }
  const directory = `/workspace/.oma-restore-${crypto.randomUUID()}`;
  const tools = (await files.run(`mkdir -p ${directory} && { command -v zstd >/dev/null 2>&1 && echo zstd; command -v gzip >/dev/null 2>&1 && echo gzip; true; }`, signal)).split("\n");
  const codec: Codec = options.codecs.includes("zstd") && tools.includes("zstd") ? "zstd" : options.compressible && options.codecs.includes("gzip") && tools.includes("gzip") ? "gzip" : "none";
  const decode = codec === "zstd" ? "zstd -d -c -q | " : codec === "gzip" ? "gzip -d -c | " : "";
  // Parts are named `part-<index>-<size>`: one is read once the file holds all its bytes; `end` follows the last.
  const loop = [
    `cd ${directory} && i=0 && while :; do`,
    `set -- part-$(printf %06d $i)-*;`,
    `if [ -e "$1" ]; then want=\${1##*-}; while [ "$(stat -c %s "$1")" != "$want" ]; do sleep ${POLL_SECONDS}; done; cat "$1" && rm -f "$1" || exit 1; i=$((i+1));`,
    // A refused restore removes the folder: the loop then ends rather than waiting for parts that never come.
    `elif [ -e end ]; then break; elif [ ! -d ${directory} ]; then exit 1; else sleep ${POLL_SECONDS}; fi;`,
    `done | ${decode}tar -xf - -C /workspace`,
  ].join(" ");
  // tar's complaints go to a file, and only their start to the exec's output: a broken archive can print a line per entry.
  const errors = `/tmp/.oma-restore-errors-${crypto.randomUUID()}`;
  const extract = `if ! ( ${loop} ) 2>${errors}; then head -c 4096 ${errors} >&2; rm -f ${errors}; exit 1; fi; rm -f ${errors}`;
  const stop = new AbortController();
  const execSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const extraction = execCollect(client, sandboxId, { command: "sh", args: ["-c", `${extract} && rm -rf ${directory}${options.afterExtract ? ` && { ${options.afterExtract}; } 2>/dev/null; true` : ""}`], signal: execSignal, maxOutputBytes: 64 * 1024 });
  extraction.catch(() => undefined);
  const lease = await options.budget?.acquire(2 * options.partBytes, signal);
  try {
    let read = 0;
    const counted = async function* () {
      for await (const chunk of segments()) {
        read += chunk.byteLength;
        yield chunk;
      }
    };
    await uploadParts(transcode(counted(), codec, "encode"), directory, { ...options, onBytes: () => options.onBytes?.(read) }, extraction);
    await client.writeFile(sandboxId, `${directory}/end`, new Uint8Array(0), signal);
    const result = await extraction;
    options.onBytes?.(size);
    if (result.exitCode !== 0) {
      throw new SandboxFailedError({ message: `extracting the restore in the sandbox failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 300)}`, context: { exitCode: result.exitCode } });
    }
  } catch (error) {
    stop.abort(error);
    await files.run(`rm -rf ${directory}`).catch(() => undefined);
    throw error;
  } finally {
    lease?.release();
  }
}

/**
 * Writes the encoded archive in parts, filling the next part while the previous one uploads (two buffers,
 * reused; every piece is copied in before the next is read). Stops early when the sandbox's extraction ended
 * first (it failed).
 */
async function uploadParts(encoded: AsyncIterable<Buffer>, directory: string, options: SendRestoreOptions, extraction: Promise<unknown>): Promise<void> {
  const { client, sandboxId, signal, partBytes } = options;
  const pair = scratchOf(options, 2 * partBytes);
  const buffers = pair ? [pair.subarray(0, partBytes), pair.subarray(partBytes)] : [Buffer.allocUnsafeSlow(partBytes), Buffer.allocUnsafeSlow(partBytes)];
  let index = 0;
  let filled = 0;
  let uploading: Promise<void> | null = null;
  let extracted = false;
  extraction.then(
    () => void (extracted = true),
    () => void (extracted = true),
  );
  const upload = async (bytes: Buffer, part: number) => {
    if (extracted) throw new SandboxFailedError({ message: "the sandbox stopped extracting the restore before it was sent" });
    await client.writeFile(sandboxId, `${directory}/part-${String(part).padStart(6, "0")}-${bytes.byteLength}`, bytes, signal);
    options.onBytes?.(0);
  };
  // Part i fills buffer i % 2. Uploads run one at a time: part i goes once part i - 1 is in, and the buffer
  // filled next (part i + 1) is part i - 1's, free by then.
  const ship = async () => {
    const bytes = (buffers[index % 2] as Buffer).subarray(0, filled);
    await uploading;
    uploading = upload(bytes, index);
    uploading.catch(() => undefined);
    index += 1;
    filled = 0;
  };
  for await (const chunk of encoded) {
    let offset = 0;
    while (offset < chunk.byteLength) {
      const buffer = buffers[index % 2] as Buffer;
      const step = Math.min(partBytes - filled, chunk.byteLength - offset);
      chunk.copy(buffer, filled, offset, offset + step);
      filled += step;
      offset += step;
      if (filled === partBytes) await ship();
    }
  }
  if (filled > 0) await ship();
  await uploading;
}

/** The first `bytes` of the send's scratch memory as a Buffer, when it holds that many. */
function scratchOf(options: SendRestoreOptions, bytes: number): Buffer | null {
  const { scratch } = options;
  return scratch && scratch.byteLength >= bytes ? Buffer.from(scratch.buffer, scratch.byteOffset, bytes) : null;
}
