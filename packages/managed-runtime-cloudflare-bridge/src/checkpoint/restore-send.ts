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
export async function sendRestoreArchive(
  segments: () => AsyncIterable<Uint8Array>,
  size: number,
  options: SendRestoreOptions,
): Promise<void> {
  const files = createBridgeFiles(options.client, options.sandboxId, {
    maxRequestBytes: options.maxRequestBytes,
  });
  const verify = options.verify ?? true;
  const listing = verify
    ? await createExpectedListing({
        maxBytes: LISTING_MAX_BYTES,
        ...(options.spoolDirectory === undefined ? {} : { directory: options.spoolDirectory }),
      })
    : null;
  const directory = `/workspace/.oma-restore-${crypto.randomUUID()}`;
  const listingDirectory = `${directory}-listing`;
  try {
    const sent = listing ? () => listing.tap(segments()) : segments;
    if (size <= options.singleRequestBytes && size <= options.maxRequestBytes) {
      await hydrateWhole(sent, size, options);
      if (listing) await verifyHydrated(() => listing.finish(segments), listingDirectory, options);
      else if (options.afterExtract)
        await files.run(options.afterExtract, options.signal).catch(() => undefined);
    } else
      await sendInParts(
        sent,
        size,
        directory,
        listing ? { directory: listingDirectory, finish: () => listing.finish(segments) } : null,
        options,
      );
  } catch (error) {
    await files.run(`rm -rf ${directory} ${listingDirectory}`).catch(() => undefined);
    throw error;
  } finally {
    await listing?.dispose();
  }
}

/** A small archive as one `/hydrate`, built in the scratch memory when that holds it. */
async function hydrateWhole(
  segments: () => AsyncIterable<Uint8Array>,
  size: number,
  options: SendRestoreOptions,
): Promise<void> {
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

/** Where the expected listing goes and how it is had once the archive was read. */
interface ListingTarget {
  readonly directory: string;
  finish(): Promise<BufferedSpool>;
}

/**
 * A larger archive in parts, in one exec of `restore.sh`: `extract` as the parts land, then (with a listing)
 * `verify` against the listing sent after the archive, then the after-step. Without a listing, `extract` alone
 * and the after-step in an exec of its own.
 */
async function sendInParts(
  segments: () => AsyncIterable<Uint8Array>,
  size: number,
  directory: string,
  listing: ListingTarget | null,
  options: SendRestoreOptions,
): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const folders = listing ? `${directory} ${listing.directory}` : directory;
  const tools = (
    await files.run(
      `mkdir -p ${folders} && { command -v zstd >/dev/null 2>&1 && echo zstd; command -v gzip >/dev/null 2>&1 && echo gzip; true; }`,
      signal,
    )
  ).split("\n");
  const codec: Codec =
    options.codecs.includes("zstd") && tools.includes("zstd")
      ? "zstd"
      : options.compressible && options.codecs.includes("gzip") && tools.includes("gzip")
        ? "gzip"
        : "none";
  // tar's complaints go to a file, and only their start to the exec's output: a broken archive can print a line per entry.
  const errors = `/tmp/.oma-restore-errors-${crypto.randomUUID()}`;
  const args = listing
    ? [
        "restore",
        directory,
        codec,
        errors,
        listing.directory,
        verifyScratch(),
        options.afterExtract ?? "",
        ...pruneArguments(options.excludes ?? []),
      ]
    : ["extract", directory, codec, errors];
  const stop = new AbortController();
  const execSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const restoring = execCollect(client, sandboxId, {
    command: "sh",
    args: ["-c", RESTORE_SCRIPT, "restore.sh", ...args],
    signal: execSignal,
    maxOutputBytes: 64 * 1024,
  });
  restoring.catch(() => undefined);
  const lease = await options.budget?.acquire(2 * options.partBytes, signal);
  try {
    let read = 0;
    const counted = async function* () {
      for await (const chunk of segments()) {
        read += chunk.byteLength;
        yield chunk;
      }
    };
    try {
      await uploadParts(
        transcode(counted(), codec, "encode"),
        directory,
        { ...options, onBytes: () => options.onBytes?.(read) },
        restoring,
      );
      options.onBytes?.(size);
      // The archive is sent: its part buffers (the scratch memory, or the lease) serve the listing's.
      if (listing)
        await uploadListing(await listing.finish(), listing.directory, options, restoring);
    } catch (error) {
      // The sandbox's side ended first: its own account of why says more than "it stopped reading".
      const ended = await Promise.race([restoring, Promise.resolve(null)]).catch(() => null);
      if (ended && ended.exitCode !== 0) failOnExit(ended, "restoring in the sandbox");
      throw error;
    }
    failOnExit(await restoring, "restoring in the sandbox");
  } catch (error) {
    stop.abort(error);
    throw error;
  } finally {
    lease?.release();
  }
  if (!listing && options.afterExtract)
    await files.run(options.afterExtract, signal).catch(() => undefined);
}

/** After a `/hydrate`: the listing in parts and one exec of `restore.sh verify`, then the after-step. */
async function verifyHydrated(
  finish: () => Promise<BufferedSpool>,
  directory: string,
  options: SendRestoreOptions,
): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  await files.run(`mkdir -p ${directory}`, signal);
  const verification = execCollect(client, sandboxId, {
    command: "sh",
    args: [
      "-c",
      RESTORE_SCRIPT,
      "restore.sh",
      "verify",
      directory,
      verifyScratch(),
      options.afterExtract ?? "",
      ...pruneArguments(options.excludes ?? []),
    ],
    ...(signal === undefined ? {} : { signal }),
    maxOutputBytes: 64 * 1024,
  });
  verification.catch(() => undefined);
  const lease = await options.budget?.acquire(2 * options.partBytes, signal);
  try {
    await uploadListing(await finish(), directory, options, verification);
  } finally {
    lease?.release();
  }
  failOnExit(await verification, "verifying the restore in the sandbox");
}

const verifyScratch = () => `/tmp/.oma-verify-${crypto.randomUUID()}`;

/** The expected listing, in parts as `restore.sh` receives them. */
async function uploadListing(
  listing: BufferedSpool,
  directory: string,
  options: SendRestoreOptions,
  reader: Promise<unknown>,
): Promise<void> {
  const chunks = async function* () {
    for await (const chunk of listing.chunks()) yield chunk;
  };
  const { onBytes: _ignored, ...quiet } = options;
  await uploadParts(chunks(), directory, quiet, reader);
}

/**
 * A failed exit of `restore.sh` as its typed error: 3 is a part that never matched its hash, 4 a tree that
 * differs from the listing (the first differing record on stdout, a leading tab when it is the sandbox's).
 */
function failOnExit(
  result: { readonly exitCode: number | null; readonly stdout: string; readonly stderr: string },
  what: string,
): void {
  if (result.exitCode === 0) return;
  if (result.exitCode === 4) {
    const record = result.stdout.split("\n")[0] ?? "";
    const found = record.startsWith("\t");
    const path = record.replace(/^\t/, "").split("//")[0] ?? "";
    throw new IntegrityError({
      message: `the restored tree differs from the checkpoint at ${JSON.stringify(path.slice(0, 256))} (${found ? "as found in the sandbox" : "as the checkpoint has it"}: ${JSON.stringify(record.replace(/^\t/, "").slice(0, 300))})`,
      context: { path: path.slice(0, 256), reason: "restore_differs" },
    });
  }
  if (result.exitCode === 3) {
    throw new IntegrityError({
      message: `${what} failed: ${result.stderr.slice(0, 300)}`,
      context: { reason: "part_mismatch" },
    });
  }
  throw new SandboxFailedError({
    message: `${what} failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 300)}`,
    context: { exitCode: result.exitCode },
  });
}

/**
 * Writes a stream in parts as `restore.sh` reads them, filling the next part while the previous one uploads
 * (two buffers, reused; every piece is copied in before the next is read): `part-<i>`, then, once its PUT
 * returned, `part-<i>.sha256`, and `end` with the number of parts after the last. Stops early when the
 * sandbox's reader ended first (it failed).
 */
async function uploadParts(
  encoded: AsyncIterable<Buffer>,
  directory: string,
  options: SendRestoreOptions,
  extraction: Promise<unknown>,
): Promise<void> {
  const { client, sandboxId, signal, partBytes } = options;
  const pair = scratchOf(options, 2 * partBytes);
  const buffers = pair
    ? [pair.subarray(0, partBytes), pair.subarray(partBytes)]
    : [Buffer.allocUnsafeSlow(partBytes), Buffer.allocUnsafeSlow(partBytes)];
  let index = 0;
  let filled = 0;
  let uploading: Promise<void> | null = null;
  let extracted = false;
  extraction.then(
    () => void (extracted = true),
    () => void (extracted = true),
  );
  const upload = async (bytes: Buffer, part: number) => {
    if (extracted)
      throw new SandboxFailedError({
        message: "the sandbox stopped reading the restore before it was sent",
      });
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
  return scratch && scratch.byteLength >= bytes
    ? Buffer.from(scratch.buffer, scratch.byteOffset, bytes)
    : null;
}
