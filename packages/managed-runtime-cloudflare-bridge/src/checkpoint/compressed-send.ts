import { promisify } from "node:util";
import { constants, gzip } from "node:zlib";
import type { ArchivePart } from "@open-managed-agents/workspace-archive";
import { createBridgeFiles } from "../runtime/files.js";
import type { MemoryBudget, MemoryLease } from "../memory-budget.js";
import type { BridgeClient } from "../wire/bridge-client.js";

const gzipAsync = promisify(gzip);

interface Pending {
  readonly part: ArchivePart;
  readonly compressed: Promise<Buffer>;
  readonly lease: MemoryLease | undefined;
}
/** Compress the restore when the first part shrinks below this fraction of its size. */
const COMPRESSION_WORTH = 0.8;
/** A first part smaller than this (or than half a part) says too little about the rest; it goes uncompressed. */
const SAMPLE_BYTES = 1024 * 1024;

/** Options of {@link sendParts}. */
export interface SendPartsOptions {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly maxRequestBytes: number;
  /** Size of the parts; decides how large a first part is a fair sample. */
  readonly partBytes: number;
  readonly signal?: AbortSignal;
  /** Called with the uncompressed bytes sent so far. */
  readonly onBytes?: (sent: number) => void;
  /** Shared by every run: a part's bytes are held from before it is read until it was sent. */
  readonly budget?: MemoryBudget;
}

/**
 * Sends restore parts to `/workspace`, in order. When the first sizeable part compresses well and the sandbox has
 * gzip, every part is gzip-compressed in the driver (one part ahead, off the main thread), written with a
 * file PUT into a scratch folder, and unpacked there in one pass: the bridge moves fewer bytes. Otherwise
 * each part is one `/hydrate`, as before. The scratch folder is removed whatever happens.
 */
export async function sendParts(parts: AsyncIterable<ArchivePart>, options: SendPartsOptions): Promise<void> {
  const { client, sandboxId, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const compress = (part: ArchivePart) => {
    const compressed = gzipAsync(part.bytes, { level: constants.Z_BEST_SPEED });
    compressed.catch(() => undefined);
    return compressed;
  };
  const directory = `/workspace/.oma-restore-${crypto.randomUUID()}`;
  let mode: "undecided" | "gzip" | "raw" = "undecided";
  let sent = 0;
  let pending: Pending | null = null;
  try {
    for await (const { part, lease } of leased(parts, options)) {
      const item = { part, lease, compressed: mode === "raw" ? null : compress(part) };
      try {
        if (mode === "undecided") mode = await decide(item);
        if (mode !== "gzip") {
          await client.hydrate(sandboxId, part.bytes, signal);
          sent += part.size;
          options.onBytes?.(sent);
          continue;
        }
      } finally {
        if (mode !== "gzip") lease?.release();
      }
      if (options.budget === undefined) {
        // This part compresses while the previous one uploads.
        if (pending) await upload(pending);
        pending = item as Pending;
      } else {
        // Under a shared budget a run holds one part at a time: holding one while waiting for the next could
        // leave every run waiting on the others.
        await upload(item as Pending);
      }
    }
    if (pending) await upload(pending);
    if (mode === "gzip") {
      const unpack = `case "$part" in *.tar) tar -xf "$part" -C /workspace ;; *) gzip -dc "$part" | tar -xf - -C /workspace ;; esac`;
      await files.run(`cd ${directory} && for part in part-*; do ${unpack} || exit 1; rm -f "$part"; done`, signal);
    }
  } finally {
    pending?.lease?.release();
    if (mode === "gzip") await files.run(`rm -rf ${directory}`).catch(() => undefined);
  }

  /** Decided on the first part large enough to be a fair sample; smaller ones before it go uncompressed. */
  async function decide(first: { readonly part: ArchivePart; readonly compressed: Promise<Buffer> | null }): Promise<typeof mode> {
    if (!first.compressed) return "raw";
    if (first.part.size < Math.min(SAMPLE_BYTES, options.partBytes / 2)) return "undecided";
    const compressed = await first.compressed;
    if (compressed.byteLength >= first.part.size * COMPRESSION_WORTH || compressed.byteLength > options.maxRequestBytes) return "raw";
    const found = await files.run(`command -v gzip >/dev/null 2>&1 && mkdir -p ${directory} && echo gzip || echo none`, signal);
    return found.trim() === "gzip" ? "gzip" : "raw";
  }

  async function upload(item: Pending): Promise<void> {
    try {
      await uploadPart(item);
    } finally {
      item.lease?.release();
    }
  }

  async function uploadPart(item: Pending): Promise<void> {
    const compressed = await item.compressed;
    if (compressed.byteLength > options.maxRequestBytes) {
      // Never expected (gzip -1 grows a part by a fraction of a percent at worst); the part goes uncompressed.
      await client.writeFile(sandboxId, `${directory}/part-${String(item.part.index).padStart(6, "0")}.tar`, item.part.bytes, signal);
    } else {
      await client.writeFile(sandboxId, `${directory}/part-${String(item.part.index).padStart(6, "0")}`, compressed, signal);
    }
    sent += item.part.size;
    options.onBytes?.(sent);
  }
}

/** Yields each part with its bytes held from `budget`, taken before the part is read into memory. */
async function* leased(parts: AsyncIterable<ArchivePart>, options: SendPartsOptions): AsyncGenerator<{ part: ArchivePart; lease: MemoryLease | undefined }> {
  const iterator = parts[Symbol.asyncIterator]();
  try {
    for (;;) {
      const lease = await options.budget?.acquire(options.partBytes, options.signal);
      let next: IteratorResult<ArchivePart>;
      try {
        next = await iterator.next();
      } catch (error) {
        lease?.release();
        throw error;
      }
      if (next.done) {
        lease?.release();
        return;
      }
      yield { part: next.value, lease };
    }
  } finally {
    await iterator.return?.();
  }
}
