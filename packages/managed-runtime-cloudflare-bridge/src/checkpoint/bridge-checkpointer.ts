import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  NotFoundError,
  SandboxFailedError,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "@open-managed-agents/workspace-archive";
import type { MemoryBudget } from "../memory-budget.js";
import type { BridgeCheckpointer, PreparedRestore } from "../runtime/bridge-runtime.js";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import {
  createCheckpointHandle,
  readCheckpointHandle,
  safeCheckpointName,
} from "./checkpoint-handle.js";
import { createIncrementalCheckpoints } from "./incremental.js";
import { isManifestHandle, readManifestHandle } from "./manifest-handle.js";
import { type Codec, zstdSupport } from "./codec.js";
import { sendRestoreArchive } from "./restore-send.js";
import { fetchArchiveInParts } from "./sandbox-parts.js";
import { inspectCheckpointArchive } from "./archive-policy.js";
import { type Spool, createSpool, hashStream } from "./spool.js";

/** A transfer in progress, for progress lines. */
export interface CheckpointProgress {
  readonly phase: "checkpoint" | "restore";
  readonly sandboxId: string;
  readonly bytes: number;
  readonly totalBytes: number | null;
}

/** Options of {@link createBridgeCheckpointer}; validated by the driver factory. */
export interface BridgeCheckpointerOptions {
  readonly provider: string;
  readonly client: BridgeClient;
  readonly store: BlobStore;
  readonly keyPrefix: string;
  readonly excludes: readonly string[];
  /** Largest request body the bridge accepts (`maxHydrateBytes`). */
  readonly maxRequestBytes: number;
  /** Workspaces up to this size use one `/persist` and one `/hydrate`. */
  readonly singleRequestBytes: number;
  /** Size of archive parts moved one request at a time. */
  readonly partBytes: number;
  readonly maxCheckpointBytes: number;
  /** Limits every checkpoint archive is inspected against, when stored and before it is restored. */
  readonly archiveLimits: ArchiveLimits;
  /** How transfers are compressed (see the driver option). @default "auto" */
  readonly compression?: "auto" | "gzip" | "off";
  readonly spoolDirectory?: string;
  /** Bounds the archive bytes held in memory across every run of the process. */
  readonly memoryBudget?: MemoryBudget;
  readonly onProgress?: (progress: CheckpointProgress) => void;
  /**
   * Whether a restore is proved equal to its checkpoint in the sandbox before it returns. Off only to measure
   * what the proof costs (the bridge benchmark); never in service. @default true
   */
  readonly verifyRestores?: boolean;
}

/**
 * Checkpoints `/workspace` of a bridge sandbox into a blob store and restores it. Small workspaces
 * travel in one `/persist` or `/hydrate`; larger ones are archived in parts inside the sandbox and
 * fetched with file GETs, and restored part by part, so no request exceeds the bridge's limits and the
 * driver holds at most one part in memory.
 */
export function createBridgeCheckpointer(options: BridgeCheckpointerOptions): BridgeCheckpointer {
  const { client, store } = options;

  const progress =
    (phase: CheckpointProgress["phase"], sandboxId: string, totalBytes: number | null) =>
    (bytes: number) =>
      options.onProgress?.({ phase, sandboxId, bytes, totalBytes });

  const measureWorkspace = async (sandboxId: string, signal?: AbortSignal): Promise<number> => {
    const files = createBridgeFiles(client, sandboxId, {
      maxRequestBytes: options.maxRequestBytes,
    });
    const output = await files.run("du -sb /workspace | cut -f1", signal);
    const size = Number.parseInt(output.trim(), 10);
    if (!Number.isSafeInteger(size))
      throw new SandboxFailedError({ message: "could not measure the workspace size" });
    return size;
  };

  const archiveInParts = (sandboxId: string, spool: Spool, signal?: AbortSignal): Promise<void> =>
    fetchArchiveInParts({
      client,
      sandboxId,
      spool,
      signal,
      partBytes: options.partBytes,
      maxRequestBytes: options.maxRequestBytes,
      command: (_directory, directoryName) =>
        `tar -cf - -C /workspace ${[directoryName, ...options.excludes].map((pattern) => `--exclude=${shellQuote(pattern)}`).join(" ")} .`,
    });

  const storeSpool = async (sandboxId: string, name: string | undefined, spool: Spool) => {
    const { sha256, size } = await spool.finish();
    // Proves the bytes are a well-formed tar that a restore will accept before they are kept.
    await inspectCheckpointArchive(spool.read(), options.archiveLimits);
    const blobKey = `${options.keyPrefix}/${encodeURIComponent(sandboxId)}/${safeCheckpointName(name, sha256)}-${sha256}.tar`;
    const stored = await store.put(blobKey, spool.read(), {
      contentType: "application/x-tar",
      customMetadata: { sha256, runtimeId: sandboxId, size: String(size) },
      ifNoneMatch: "*",
      contentLength: size,
    });
    if (stored === null) await verifyStored(blobKey, sha256, size);
    return createCheckpointHandle({ provider: options.provider, sandboxId, sha256, blobKey, size });
  };

  const verifyStored = async (blobKey: string, sha256: string, size: number): Promise<void> => {
    const existing = await store.get(blobKey);
    if (!existing)
      throw new IntegrityError({
        message: "checkpoint key vanished during a conditional write",
        context: { blobKey },
      });
    const digest = existing.size === size ? await hashStream(existing.stream()) : null;
    if (!digest || digest.sha256 !== sha256 || digest.size !== size) {
      throw new IntegrityError({
        message: "storage collision: an object with different content exists at the checkpoint key",
        context: { blobKey },
      });
    }
  };

  const incremental = createIncrementalCheckpoints(options);

  const codecs = async (): Promise<Codec[]> => {
    const compression = options.compression ?? "auto";
    if (compression === "off") return [];
    if (compression === "gzip") return ["gzip"];
    return (await zstdSupport()) ? ["zstd", "gzip"] : ["gzip"];
  };

  /** A restore ready to go: `segments` streams the whole tar, in order. */
  const prepared = (
    segments: () => AsyncIterable<Uint8Array>,
    size: number,
    extra: {
      readonly compressible: boolean;
      readonly afterExtract?: string;
      readonly scratch?: Uint8Array;
      readonly dispose: () => Promise<void>;
    },
  ): PreparedRestore => ({
    size,
    async send(sandboxId, sendSignal) {
      await sendRestoreArchive(segments, size, {
        client,
        sandboxId,
        maxRequestBytes: options.maxRequestBytes,
        partBytes: Math.min(options.partBytes, options.maxRequestBytes),
        singleRequestBytes: options.singleRequestBytes,
        codecs: await codecs(),
        compressible: extra.compressible,
        excludes: options.excludes,
        ...(options.spoolDirectory === undefined ? {} : { spoolDirectory: options.spoolDirectory }),
        ...(options.verifyRestores === undefined ? {} : { verify: options.verifyRestores }),
        ...(extra.afterExtract === undefined ? {} : { afterExtract: extra.afterExtract }),
        ...(options.memoryBudget === undefined ? {} : { budget: options.memoryBudget }),
        ...(extra.scratch === undefined ? {} : { scratch: extra.scratch }),
        onBytes: progress("restore", sandboxId, size),
        ...(sendSignal === undefined ? {} : { signal: sendSignal }),
      });
    },
    dispose: extra.dispose,
  });

  const checkpointer: BridgeCheckpointer = {
    async checkpoint({ sandboxId, name, sessionId, signal }) {
      // A runtime that knows its session checkpoints incrementally; the full tar remains for the rest.
      if (sessionId !== undefined) return incremental.checkpoint({ sandboxId, sessionId, signal });
      const measured = await measureWorkspace(sandboxId, signal);
      const spool = await createSpool({
        maxBytes: options.maxCheckpointBytes,
        directory: options.spoolDirectory,
        onBytes: progress("checkpoint", sandboxId, measured),
      });
      try {
        if (measured <= options.singleRequestBytes) {
          await spool.append(await client.persist(sandboxId, options.excludes, signal), signal);
        } else {
          await archiveInParts(sandboxId, spool, signal);
        }
        return await storeSpool(sandboxId, name, spool);
      } finally {
        await spool.dispose();
      }
    },

    async prepareRestore({ handle, sessionId, signal }): Promise<PreparedRestore> {
      if (handle.provider === options.provider && isManifestHandle(handle)) {
        const metadata = readManifestHandle(handle, {
          keyPrefix: options.keyPrefix,
          maxBytes: options.maxCheckpointBytes,
        });
        const { archive, afterExtract } = await incremental.assemble(metadata, sessionId);
        const segments = async function* () {
          for (const segment of archive.segments) yield* segment.chunks();
        };
        return prepared(segments, archive.size, {
          compressible: archive.compressible,
          scratch: archive.scratch,
          ...(afterExtract === undefined ? {} : { afterExtract }),
          dispose: archive.dispose,
        });
      }
      const metadata = readCheckpointHandle(handle, {
        provider: options.provider,
        keyPrefix: options.keyPrefix,
        maxBytes: options.maxCheckpointBytes,
      });
      const object = await store.get(metadata.blobKey);
      if (!object)
        throw new NotFoundError({
          message: "checkpoint archive is missing from the store",
          context: { blobKey: metadata.blobKey },
        });
      if (object.size !== metadata.size) {
        await object
          .stream()
          .cancel()
          .catch(() => undefined);
        throw new IntegrityError({
          message: "checkpoint archive size does not match its handle",
          context: { blobKey: metadata.blobKey },
        });
      }
      const spool = await createSpool({
        maxBytes: options.maxCheckpointBytes,
        directory: options.spoolDirectory,
      });
      try {
        await spool.append(object.stream(), signal);
        const digest = await spool.finish();
        // Nothing reaches a sandbox before the archive's hash and size match the handle and every entry
        // passed inspection: the whole archive is read here, before the first request of any path.
        if (`sha256:${digest.sha256}` !== metadata.contentHash || digest.size !== metadata.size) {
          throw new IntegrityError({
            message: "checkpoint archive hash does not match its handle",
            context: { blobKey: metadata.blobKey },
          });
        }
        await inspectCheckpointArchive(spool.read(), options.archiveLimits);
        return prepared(() => spool.read() as unknown as AsyncIterable<Uint8Array>, digest.size, {
          compressible: false,
          dispose: () => spool.dispose(),
        });
      } catch (error) {
        await spool.dispose();
        throw error;
      }
    },

    async restore({ sandboxId, handle, sessionId, signal }) {
      const ready = await checkpointer.prepareRestore({ handle, sessionId, signal });
      try {
        await ready.send(sandboxId, signal);
      } finally {
        await ready.dispose();
      }
    },
  };
  return checkpointer;
}
