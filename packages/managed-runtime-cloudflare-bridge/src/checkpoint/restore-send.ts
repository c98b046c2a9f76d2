import { createHash } from "node:crypto";
import { IntegrityError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createBridgeFiles } from "../runtime/files.js";
import { execCollect } from "../runtime/exec.js";
import type { MemoryBudget } from "../memory-budget.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import type { BufferedSpool } from "./buffered-spool.js";
import { type Codec, transcode } from "./codec.js";
import { createExpectedListing } from "./restore-listing.js";
import { pruneArguments } from "./sandbox-scripts.js";
import RESTORE_SCRIPT from "./scripts/restore.sh";

/** Largest expected listing a restore spools (about 150 bytes an entry: millions of entries). */
const LISTING_MAX_BYTES = 4 * 1024 * 1024 * 1024;

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
  /** Shell run in the sandbox once the archive is extracted and verified (its failure is ignored). */
  readonly afterExtract?: string;
  /**
   * Whether the sandbox proves the extracted tree equals the archive before the send returns. Off only to
   * measure what the proof costs (`pnpm bench:bridge`). @default true
   */
  readonly verify?: boolean;
  /** Checkpoint excludes (tar patterns): paths the proof does not look at, as no checkpoint holds them. */
  readonly excludes?: readonly string[];
  /** Folder of the driver's spools (the expected listing is one). */
  readonly spoolDirectory?: string;
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

/**
 * Sends a tar (given as segments streamed in order) into `/workspace`, then proves the tree there is the
 * one sent. A small archive is one `/hydrate`. A larger one is compressed in the driver when that pays (zstd
 * when both ends have it, gzip when a sample of the contents shrank), cut into parts written with file PUTs,
 * and extracted by one tar in the sandbox that reads each part once the driver has confirmed it (see
 * `scripts/restore.sh`), so uploading and extracting overlap, a file of any size needs no joining, and at
 * most two parts are in the driver's memory. Either way the listing of the sent tar (every path, type, mode,
 * size, link target and file hash) follows in parts, and the sandbox compares the extracted tree with it:
 * any difference is `integrity_failed` naming the first differing path. The scratch folders are removed
 * whatever happens.
 */
export async function sendRestoreArchive(segments: () => AsyncIterable<Uint8Array>, size: number, options: SendRestoreOptions): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const verify = options.verify ?? true;
  const listing = verify ? await createExpectedListing({ maxBytes: LISTING_MAX_BYTES, ...(options.spoolDirectory === undefined ? {} : { directory: options.spoolDirectory }) }) : null;
  const scratchName = `.oma-restore-${crypto.randomUUID()}`;
  const directory = `/workspace/${scratchName}`;
  const listingDirectory = `${directory}-listing`;
  try {
    const sent = listing ? () => listing.tap(segments()) : segments;
    if (size <= options.singleRequestBytes && size <= options.maxRequestBytes) await hydrateWhole(sent, size, options);
    else await sendInParts(sent, size, directory, listingDirectory, options);
    if (listing) await verifyTree(await listing.finish(segments), listingDirectory, options);
  } catch (error) {
    await files.run(`rm -rf ${directory} ${listingDirectory}`).catch(() => undefined);
    throw error;
  } finally {
    await listing?.dispose();
  }
  if (options.afterExtract) await files.run(options.afterExtract, signal).catch(() => undefined);
}

/** A small archive as one `/hydrate`, built in the scratch memory when that holds it. */
async function hydrateWhole(segments: () => AsyncIterable<Uint8Array>, size: number, options: SendRestoreOptions): Promise<void> {
  const lease = await options.budget?.acquire(size, options.signal);
  try {
    const bytes = scratchOf(options, size) ?? Buffer.allocUnsafeSlow(size);
    let filled = 0;
    for await (const chunk of segments()) {
      bytes.set(chunk, filled);
      filled += chunk.byteLength;
    }
    await options.client.hydrate(options.sandboxId, bytes, options.signal);
  } finally {
    lease?.release();
  }
  options.onBytes?.(size);
}

/** A larger archive in parts, extracted by `restore.sh extract` as they land. */
async function sendInParts(segments: () => AsyncIterable<Uint8Array>, size: number, directory: string, listingDirectory: string, options: SendRestoreOptions): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const tools = (await files.run(`mkdir -p ${directory} ${listingDirectory} && { command -v zstd >/dev/null 2>&1 && echo zstd; command -v gzip >/dev/null 2>&1 && echo gzip; true; }`, signal)).split("\n");
  const codec: Codec = options.codecs.includes("zstd") && tools.includes("zstd") ? "zstd" : options.compressible && options.codecs.includes("gzip") && tools.includes("gzip") ? "gzip" : "none";
  // tar's complaints go to a file, and only their start to the exec's output: a broken archive can print a line per entry.
  const errors = `/tmp/.oma-restore-errors-${crypto.randomUUID()}`;
  const stop = new AbortController();
  const execSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const extraction = execCollect(client, sandboxId, { command: "sh", args: ["-c", RESTORE_SCRIPT, "restore.sh", "extract", directory, codec, errors], signal: execSignal, maxOutputBytes: 64 * 1024 });
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
    const result = await extraction;
    options.onBytes?.(size);
    failOnExit(result, "extracting the restore in the sandbox");
  } catch (error) {
    stop.abort(error);
    throw error;
  } finally {
    lease?.release();
  }
}

/**
 * Sends the expected listing in parts and has `restore.sh verify` compare the tree with it: exit 4 names the
 * first record that differs (a leading tab when it is the sandbox's), any other failure is the sandbox's.
 */
async function verifyTree(listing: BufferedSpool, directory: string, options: SendRestoreOptions): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  await files.run(`mkdir -p ${directory}`, signal);
  const verification = execCollect(client, sandboxId, {
    command: "sh",
    args: ["-c", RESTORE_SCRIPT, "restore.sh", "verify", directory, `/tmp/.oma-verify-${crypto.randomUUID()}`, ...pruneArguments(options.excludes ?? [])],
    ...(signal === undefined ? {} : { signal }),
    maxOutputBytes: 64 * 1024,
  });
  verification.catch(() => undefined);
  const chunks = async function* () {
    for await (const chunk of listing.chunks()) yield chunk;
  };
  // The archive is sent: its part buffers (the scratch memory, or a budget's lease) serve the listing's.
  const lease = await options.budget?.acquire(2 * options.partBytes, signal);
  try {
    const { onBytes: _ignored, ...quiet } = options;
    await uploadParts(chunks(), directory, quiet, verification);
  } finally {
    lease?.release();
  }
  const result = await verification;
  if (result.exitCode === 4) {
    const record = result.stdout.split("\n")[0] ?? "";
    const path = record.replace(/^\t/, "").split("//")[0] ?? "";
    throw new IntegrityError({
      message: `the restored tree differs from the checkpoint at ${JSON.stringify(path.slice(0, 256))} (${record.startsWith("\t") ? "as found in the sandbox" : "as the checkpoint has it"}: ${JSON.stringify(record.replace(/^\t/, "").slice(0, 300))})`,
      context: { path: path.slice(0, 256), reason: "restore_differs" },
    });
  }
  failOnExit(result, "verifying the restore in the sandbox");
}

/** A failed exit of `restore.sh` as its typed error: 3 is a part that never matched its hash. */
function failOnExit(result: { readonly exitCode: number | null; readonly stderr: string }, what: string): void {
  if (result.exitCode === 0) return;
  if (result.exitCode === 3) {
    throw new IntegrityError({ message: `${what} failed: ${result.stderr.slice(0, 300)}`, context: { reason: "part_mismatch" } });
  }
  throw new SandboxFailedError({ message: `${what} failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 300)}`, context: { exitCode: result.exitCode } });
}

/**
 * Writes a stream in parts as `restore.sh` reads them, filling the next part while the previous one uploads
 * (two buffers, reused; every piece is copied in before the next is read): `part-<i>`, then, once its PUT
 * returned, `part-<i>.sha256`, and `end` with the number of parts after the last. Stops early when the
 * sandbox's reader ended first (it failed).
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
    if (extracted) throw new SandboxFailedError({ message: "the sandbox stopped reading the restore before it was sent" });
    const name = `${directory}/part-${String(part).padStart(6, "0")}`;
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    await client.writeFile(sandboxId, name, bytes, signal);
    // Only now is the part whole in the sandbox: a server may make a file full-length before it fills it.
    await client.writeFile(sandboxId, `${name}.sha256`, Buffer.from(sha256), signal);
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
  await client.writeFile(sandboxId, `${directory}/end`, Buffer.from(String(index)), signal);
}

/** The first `bytes` of the send's scratch memory as a Buffer, when it holds that many. */
function scratchOf(options: SendRestoreOptions, bytes: number): Buffer | null {
  const { scratch } = options;
  return scratch && scratch.byteLength >= bytes ? Buffer.from(scratch.buffer, scratch.byteOffset, bytes) : null;
}
