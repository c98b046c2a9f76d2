import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { type ArchiveLimits, joinPlanCommands, splitArchive } from "@open-managed-agents/workspace-archive";
import type { BridgeCheckpointer, PreparedRestore } from "../runtime/bridge-runtime.js";
import { createBridgeFiles } from "../runtime/files.js";
import { shellQuote } from "../runtime/paths.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { createCheckpointHandle, readCheckpointHandle, safeCheckpointName } from "./checkpoint-handle.js";
import { checkpointReadOptions, inspectCheckpointArchive } from "./archive-policy.js";
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
  readonly spoolDirectory?: string;
  readonly onProgress?: (progress: CheckpointProgress) => void;
}

/**
 * Checkpoints `/workspace` of a bridge sandbox into a blob store and restores it. Small workspaces
 * travel in one `/persist` or `/hydrate`; larger ones are archived in parts inside the sandbox and
 * fetched with file GETs, and restored part by part, so no request exceeds the bridge's limits and the
 * driver holds at most one part in memory.
 */
export function createBridgeCheckpointer(options: BridgeCheckpointerOptions): BridgeCheckpointer {
  const { client, store } = options;
  const archiveReadOptions = checkpointReadOptions(options.archiveLimits);

  const progress = (phase: CheckpointProgress["phase"], sandboxId: string, totalBytes: number | null) => (bytes: number) =>
    options.onProgress?.({ phase, sandboxId, bytes, totalBytes });

  const measureWorkspace = async (sandboxId: string, signal?: AbortSignal): Promise<number> => {
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    const output = await files.run("du -sb /workspace | cut -f1", signal);
    const size = Number.parseInt(output.trim(), 10);
    if (!Number.isSafeInteger(size)) throw new SandboxFailedError({ message: "could not measure the workspace size" });
    return size;
  };

  const archiveInParts = async (sandboxId: string, spool: Spool, signal?: AbortSignal): Promise<void> => {
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    const directoryName = `.oma-checkpoint-${crypto.randomUUID()}`;
    const directory = `/workspace/${directoryName}`;
    const excludes = [directoryName, ...options.excludes].map((pattern) => `--exclude=${shellQuote(pattern)}`).join(" ");
    // tar exits 1 when files change while read; that is still a consistent-enough snapshot of a live tree.
    const script = [
      `mkdir -p ${directory}`,
      `{ tar -cf - -C /workspace ${excludes} .; echo $? > ${directory}/status; } | split -b ${options.partBytes} -a 6 -d - ${directory}/part-`,
      `status=$(cat ${directory}/status); [ "$status" -le 1 ] || { echo "tar failed: $status" >&2; exit 1; }`,
      `cd ${directory} && stat -c '%n %s' part-*`,
    ].join(" && ");
    try {
      const listing = await files.run(script, signal);
      const parts = listing
        .split("\n")
        .map((line) => /^(part-\d{6}) (\d+)$/.exec(line.trim()))
        .filter((match): match is RegExpExecArray => match !== null)
        .map(([, part = "", size = "0"]) => ({ part, size: Number(size) }))
        .sort((a, b) => (a.part < b.part ? -1 : 1));
      if (parts.length === 0) throw new SandboxFailedError({ message: "archiving the workspace produced no parts" });
      // The listing proves every part exists, so parts are fetched without a check each (an exec between
      // file GETs slows the GET after it); the listed sizes catch a part that reads short or empty.
      for (const { part } of parts) {
        await spool.append(await client.readFile(sandboxId, `${directory}/${part}`, signal), signal);
      }
      const expected = parts.reduce((sum, { size }) => sum + size, 0);
      const { size } = await spool.finish();
      if (size !== expected) {
        throw new SandboxFailedError({ message: `archive parts arrived with ${size} of ${expected} bytes`, context: { expected, received: size } });
      }
    } finally {
      await files.run(`rm -rf ${directory}`).catch(() => undefined);
    }
  };

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
    if (!existing) throw new IntegrityError({ message: "checkpoint key vanished during a conditional write", context: { blobKey } });
    const digest = existing.size === size ? await hashStream(existing.stream()) : null;
    if (!digest || digest.sha256 !== sha256 || digest.size !== size) {
      throw new IntegrityError({ message: "storage collision: an object with different content exists at the checkpoint key", context: { blobKey } });
    }
  };

  const checkpointer: BridgeCheckpointer = {
    async checkpoint({ sandboxId, name, signal }) {
      const measured = await measureWorkspace(sandboxId, signal);
      const spool = await createSpool({ maxBytes: options.maxCheckpointBytes, directory: options.spoolDirectory, onBytes: progress("checkpoint", sandboxId, measured) });
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

    async prepareRestore({ handle, signal }): Promise<PreparedRestore> {
      const metadata = readCheckpointHandle(handle, { provider: options.provider, keyPrefix: options.keyPrefix, maxBytes: options.maxCheckpointBytes });
      const object = await store.get(metadata.blobKey);
      if (!object) throw new NotFoundError({ message: "checkpoint archive is missing from the store", context: { blobKey: metadata.blobKey } });
      if (object.size !== metadata.size) {
        await object.stream().cancel().catch(() => undefined);
        throw new IntegrityError({ message: "checkpoint archive size does not match its handle", context: { blobKey: metadata.blobKey } });
      }
      const spool = await createSpool({ maxBytes: options.maxCheckpointBytes, directory: options.spoolDirectory });
      try {
        await spool.append(object.stream(), signal);
        const digest = await spool.finish();
        // Nothing reaches a sandbox before the archive's hash and size match the handle and every entry
        // passed inspection: the whole archive is read here, before the first request of any path.
        if (`sha256:${digest.sha256}` !== metadata.contentHash || digest.size !== metadata.size) {
          throw new IntegrityError({ message: "checkpoint archive hash does not match its handle", context: { blobKey: metadata.blobKey } });
        }
        await inspectCheckpointArchive(spool.read(), options.archiveLimits);
        return { size: digest.size, send: (sandboxId, sendSignal) => sendArchive(sandboxId, spool, digest.size, sendSignal), dispose: () => spool.dispose() };
      } catch (error) {
        await spool.dispose();
        throw error;
      }
    },

    async restore({ sandboxId, handle, signal }) {
      const prepared = await checkpointer.prepareRestore({ handle, signal });
      try {
        await prepared.send(sandboxId, signal);
      } finally {
        await prepared.dispose();
      }
    },
  };
  return checkpointer;

  async function sendArchive(sandboxId: string, spool: Spool, size: number, signal?: AbortSignal): Promise<void> {
    const report = progress("restore", sandboxId, size);
    if (size <= options.singleRequestBytes && size <= options.maxRequestBytes) {
      const bytes = new Uint8Array(await new Response(spool.read()).arrayBuffer());
      await client.hydrate(sandboxId, bytes, signal);
      report(size);
      return;
    }
    let sent = 0;
    const parts = splitArchive(spool.read(), { ...archiveReadOptions, maxPartBytes: Math.min(options.partBytes, options.maxRequestBytes) });
    for await (const part of parts) {
      await client.hydrate(sandboxId, part.bytes, signal);
      sent += part.size;
      report(sent);
    }
    // Files larger than a part arrived as chunks; join them in the sandbox now that every part is in.
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    for (const plan of parts.joinPlans) await files.run(joinPlanCommands(plan, { cwd: "/workspace", verify: true }), signal);
  }
}
