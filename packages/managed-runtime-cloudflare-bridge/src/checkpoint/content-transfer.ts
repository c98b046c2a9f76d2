import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  ManagedRuntimeError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { createByteReader } from "@open-managed-agents/workspace-archive";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { blobKeyOf } from "./blob-keys.js";
import type { ManifestFile } from "./manifest.js";
import type { MissingContents } from "./missing-contents.js";
import { SMALL_BLOB_BYTES, createPackWriter } from "./pack-writer.js";
import { fetchConsumedParts } from "./consumed-parts.js";
import type { StoredContents } from "./stored-contents.js";
import { type Codec, transcode } from "./codec.js";

/** Options of {@link createContentTransfer}: the checkpointer's own. */
export interface ContentTransferOptions {
  readonly client: BridgeClient;
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly partBytes: number;
  readonly maxRequestBytes: number;
  readonly maxCheckpointBytes: number;
}

/** Transfers smaller than this go uncompressed. */
const COMPRESSION_SAMPLE_BYTES = 1024 * 1024;
/** Files sampled to decide on compression, spread evenly over the bytes to send, and bytes read from each. */
const COMPRESSION_SAMPLE_FILES = 32;
const COMPRESSION_SAMPLE_FILE_BYTES = 32 * 1024;
/** Compress when the sample shrinks below this fraction of its size. */
const COMPRESSION_WORTH = 0.8;
/** Prints `zstd` when the sandbox has the command. */
const ZSTD_PROBE = "command -v zstd >/dev/null 2>&1 && echo zstd || echo none";

/**
 * Moves the contents a checkpoint found missing from the store out of the sandbox: those files concatenated in
 * list order (no archive headers or padding; the manifest knows every size), compressed in the sandbox (zstd
 * when both ends have it; gzip when a sample shows it pays), fetched in parts while the sandbox still writes the next ones, and stored as it
 * arrives (small contents into packs, larger ones into a blob each), every content checked against its hash.
 */
export function createContentTransfer(options: ContentTransferOptions) {
  const { client, store } = options;

  /** Streams one content into the store under its expected hash; a different content is deleted and refused. */
  const storeBlob = async (
    session: string,
    expected: ManifestFile,
    body: AsyncIterable<Buffer>,
  ): Promise<void> => {
    const key = blobKeyOf(options.keyPrefix, session, expected.sha256);
    const hash = createHash("sha256");
    let size = 0;
    // Each piece is copied as it passes: the reader's pieces are views of a buffer reused for the next read.
    const copies = async function* () {
      for await (const chunk of body) yield Buffer.from(chunk);
    };
    const hashed = Readable.from(copies()).on("data", (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.byteLength;
    });
    await store.put(key, Readable.toWeb(hashed) as ReadableStream<Uint8Array>, {
      contentLength: expected.size,
      contentType: "application/octet-stream",
      ifNoneMatch: "*",
    });
    if (hash.digest("hex") !== expected.sha256 || size !== expected.size) {
      await store.delete(key);
      throw changedWhileCheckpointed(expected);
    }
  };

  /** Sends the missing contents with the first of `codecs` that fits; returns where the small ones were packed. */
  const transfer = async (
    sandboxId: string,
    session: string,
    missing: MissingContents,
    codecs: readonly Codec[],
    signal?: AbortSignal,
  ): Promise<StoredContents> => {
    // `cat` in list order; a file that vanished fails `xargs` (123), which the status check refuses.
    const concatenate = (directory: string) => `cat ${directory}/list-* | xargs -0 -r cat --`;
    let codec: Codec = "none";
    const compressing = missing.bytes >= COMPRESSION_SAMPLE_BYTES;
    // Contents are stored as the parts arrive.
    return fetchConsumedParts({
      client,
      sandboxId,
      signal,
      partBytes: options.partBytes,
      maxRequestBytes: options.maxRequestBytes,
      maxBytes: options.maxCheckpointBytes,
      // Whether the sandbox has zstd is asked with the scratch folder's creation.
      ...(compressing && codecs.includes("zstd") ? { probe: ZSTD_PROBE } : {}),
      prepare: async (directory, probed) => {
        await writeList(sandboxId, directory, missing, signal);
        codec = compressing
          ? await chooseCodec(
              sandboxId,
              directory,
              missing,
              codecs,
              probed.trim() === "zstd",
              signal,
            )
          : "none";
      },
      consume: (readable) =>
        storeContents(transcode(readable, codec, "decode"), session, missing).catch(
          (error: unknown) => {
            if (ManagedRuntimeError.isInstance(error)) throw error;
            throw new SandboxFailedError({
              message: "the sandbox sent contents that could not be read",
              cause: error,
            });
          },
        ),
      command: (directory) =>
        codec === "none"
          ? concatenate(directory)
          : `{ ${concatenate(directory)}; echo $? > ${directory}/cat-status; } | ${codec === "zstd" ? "zstd -1 -q -c" : "gzip -1"}`,
    });
  };

  /** zstd when both ends have it (cheap even on random bytes), else gzip when a sample shows it pays. */
  const chooseCodec = async (
    sandboxId: string,
    directory: string,
    missing: MissingContents,
    codecs: readonly Codec[],
    sandboxZstd: boolean,
    signal?: AbortSignal,
  ): Promise<Codec> => {
    if (codecs.includes("zstd") && sandboxZstd) return "zstd";
    if (
      codecs.includes("gzip") &&
      (await compressionPays(sandboxId, directory, await samplePaths(missing), signal))
    )
      return "gzip";
    return "none";
  };

  /**
   * Writes one path per content, in the order the sandbox concatenates them and the driver slices them again,
   * into list files of at most `maxRequestBytes` each (`cat list-*` joins them, so a path may span two).
   */
  const writeList = async (
    sandboxId: string,
    directory: string,
    missing: MissingContents,
    signal?: AbortSignal,
  ): Promise<void> => {
    let index = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const write = async (bytes: Buffer) => {
      await client.writeFile(
        sandboxId,
        `${directory}/list-${String(index).padStart(6, "0")}`,
        bytes,
        signal,
      );
      index += 1;
    };
    for await (const file of missing.files()) {
      const path = Buffer.from(`./${file.path}\0`);
      pending.push(path);
      pendingBytes += path.byteLength;
      if (pendingBytes < options.maxRequestBytes) continue;
      const joined = Buffer.concat(pending, pendingBytes);
      await write(joined.subarray(0, options.maxRequestBytes));
      pending = [joined.subarray(options.maxRequestBytes)];
      pendingBytes = joined.byteLength - options.maxRequestBytes;
    }
    if (pendingBytes > 0) await write(Buffer.concat(pending, pendingBytes));
  };

  /**
   * Cuts the concatenated contents back into files by their listed sizes as they arrive: small ones into packs,
   * larger ones each into a blob. A file that changed shifts every slice after it, so its hash (or the total
   * length) no longer matches: the checkpoint is refused, nothing is published.
   */
  const storeContents = async (
    source: AsyncIterable<Buffer>,
    session: string,
    missing: MissingContents,
  ): Promise<StoredContents> => {
    const reader = createByteReader(source);
    const packs = createPackWriter({ store, keyPrefix: options.keyPrefix, session });
    try {
      for await (const file of missing.files()) {
        if (file.size <= SMALL_BLOB_BYTES) {
          // Small contents share pack objects: a store call each would dominate the checkpoint.
          const bytes = await reader.read(file.size);
          if (!bytes) throw changedWhileCheckpointed(file);
          await packs.add(file, bytes);
        } else {
          await storeBlob(session, file, reader.chunks(file.size));
        }
      }
      if (!(await reader.atEnd()))
        throw new SandboxFailedError({
          message:
            "a workspace file changed while it was checkpointed: the sandbox sent more bytes than listed",
        });
    } catch (error) {
      // Left early: the decoder behind the reader (a process, when it is zstd's) is ended with it.
      await reader.close().catch(() => undefined);
      throw error;
    }
    return await packs.finish();
  };

  /**
   * Whether gzip is in the sandbox and shrinks the first {@link COMPRESSION_SAMPLE_FILE_BYTES} of each sampled
   * file below {@link COMPRESSION_WORTH}; decided per checkpoint. The head of the stream is no fair sample:
   * it is the first files in path order, often a folder of small ones unlike the rest, and gzip over a whole
   * random workspace made archiving 15× slower.
   */
  const compressionPays = async (
    sandboxId: string,
    directory: string,
    paths: readonly string[],
    signal?: AbortSignal,
  ): Promise<boolean> => {
    const files = createBridgeFiles(client, sandboxId, {
      maxRequestBytes: options.maxRequestBytes,
    });
    await client.writeFile(
      sandboxId,
      `${directory}/sample`,
      new TextEncoder().encode(paths.map((path) => `./${path}\0`).join("")),
      signal,
    );
    const sample = `${directory}/sample.bytes`;
    const read = `xargs -0 -r sh -c 'for file; do head -c ${COMPRESSION_SAMPLE_FILE_BYTES} "$file"; done' sh < ${directory}/sample > ${sample}`;
    const output = await files.run(
      `command -v gzip >/dev/null 2>&1 || { echo none; exit 0; }; cd /workspace && ${read} && wc -c < ${sample} && gzip -1 < ${sample} | wc -c; rm -f ${sample}`,
      signal,
    );
    const [raw, compressed] = output
      .trim()
      .split(/\s+/)
      .map((field) => Number.parseInt(field, 10));
    return (
      Number.isSafeInteger(raw) &&
      Number.isSafeInteger(compressed) &&
      (raw as number) > 0 &&
      (compressed as number) < (raw as number) * COMPRESSION_WORTH
    );
  };

  return { transfer };
}

/** Up to {@link COMPRESSION_SAMPLE_FILES} paths at even steps through the bytes to send. */
async function samplePaths(missing: MissingContents): Promise<string[]> {
  const step = missing.bytes / COMPRESSION_SAMPLE_FILES;
  const paths: string[] = [];
  let reached = 0;
  for await (const { path, size: weight } of missing.files()) {
    // A file is sampled when it spans the next even step; a file spanning several is sampled once.
    if (reached + weight > paths.length * step) paths.push(path);
    reached += weight;
    if (paths.length >= COMPRESSION_SAMPLE_FILES) break;
  }
  return paths;
}

function changedWhileCheckpointed(file: ManifestFile): SandboxFailedError {
  return new SandboxFailedError({
    message: "a workspace file changed while it was checkpointed",
    context: { path: file.path.slice(0, 256) },
  });
}
