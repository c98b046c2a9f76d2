import {
  CapabilityUnsupportedError,
  IntegrityError,
  InvalidRequestError,
  LimitExceededError,
  type ManagedSandboxLease,
  OUTPUTS_MOUNT_PATH,
  type OutputStrategyCapability,
  SandboxFailedError,
  type SessionOutputEntryCandidate,
  type SessionOutputPort,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import type { ReferenceWorld } from "./reference-world.js";

const MAX_FILES = 1_000;
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * The reference output port (`final_collect`, durable): lists `/mnt/session/outputs` once the harness is
 * done, hashes every file from its bytes, and stores blobs plus a manifest in the world's blob map.
 */
export function createReferenceOutputsPort(
  world: ReferenceWorld,
  strategies: readonly OutputStrategyCapability[],
): SessionOutputPort {
  const readBytes = async (
    lease: ManagedSandboxLease,
    logicalPath: string,
  ): Promise<Uint8Array> => {
    const runtime = await world.connect(lease);
    if (!runtime.readFileBytes) {
      throw new CapabilityUnsupportedError({
        message: "output collection needs readFileBytes, which this runtime lacks",
        context: { capability: "file_bytes_io" },
      });
    }
    return runtime.readFileBytes(`${OUTPUTS_MOUNT_PATH}/${logicalPath}`);
  };
  const requireOffered = (strategy: string): void => {
    if (!strategies.some((entry) => entry.strategy === strategy)) {
      throw new CapabilityUnsupportedError({
        message: `output strategy ${strategy} is not offered`,
        context: { strategy },
      });
    }
  };

  return {
    capabilities: async () => ({ strategies: strategies.map((entry) => ({ ...entry })) }),

    async prepare(input) {
      requireOffered(input.strategy);
      return {
        bindingId: `out-${input.scope.workId}-${input.fence.generation}`,
        mountPath: OUTPUTS_MOUNT_PATH,
      };
    },

    async attach(input) {
      requireOffered(input.strategy);
      const result = await (await world.connect(input.sandbox)).exec(
        `mkdir -p ${OUTPUTS_MOUNT_PATH}`,
        { signal: input.signal },
      );
      if (result.exitCode !== 0)
        throw new SandboxFailedError({
          message: `could not create ${OUTPUTS_MOUNT_PATH}`,
          context: { exitCode: result.exitCode },
        });
    },

    async collect(input) {
      requireOffered(input.strategy);
      const runtime = await world.connect(input.sandbox);
      const listing = await runtime.exec("find . -type f -print0", {
        cwd: OUTPUTS_MOUNT_PATH,
        signal: input.signal,
      });
      if (listing.exitCode !== 0)
        throw new SandboxFailedError({
          message: "listing session outputs failed",
          context: { exitCode: listing.exitCode },
        });
      const paths = listing.stdout
        .split("\0")
        .filter((path) => path !== "")
        .map((path) => path.replace(/^\.\//, ""))
        .sort();
      if (paths.length > MAX_FILES)
        throw new LimitExceededError({
          message: `more than ${MAX_FILES} output files`,
          context: { maxFiles: MAX_FILES },
        });
      const entries: SessionOutputEntryCandidate[] = [];
      let total = 0;
      for (const logicalPath of paths) {
        if (logicalPath.includes("\uFFFD"))
          throw new InvalidRequestError({
            message: "an output file name is not valid UTF-8",
            context: { path: logicalPath },
          });
        const bytes = await readBytes(input.sandbox, logicalPath);
        total += bytes.byteLength;
        if (total > MAX_BYTES)
          throw new LimitExceededError({
            message: `outputs exceed ${MAX_BYTES} bytes`,
            context: { maxBytes: MAX_BYTES },
          });
        entries.push({
          logicalPath,
          contentHash: `sha256:${sha256HexSync(bytes)}`,
          size: bytes.byteLength,
        });
      }
      return entries;
    },

    async finalize(input) {
      for (const entry of input.entries) {
        const bytes = await readBytes(input.sandbox, entry.logicalPath);
        if (
          `sha256:${sha256HexSync(bytes)}` !== entry.contentHash ||
          bytes.byteLength !== entry.size
        ) {
          throw new IntegrityError({
            message: `output ${entry.logicalPath} changed after it was collected`,
            context: { path: entry.logicalPath },
          });
        }
        world.blobs.set(`blobs/${entry.contentHash}`, bytes);
      }
      const manifest = new TextEncoder().encode(
        JSON.stringify({
          version: 1,
          sessionId: input.scope.sessionId,
          workId: input.scope.workId,
          generation: input.fence.generation,
          entries: input.entries,
        }),
      );
      const contentHash = `sha256:${sha256HexSync(manifest)}`;
      world.blobs.set(`manifests/${contentHash}`, manifest);
      return {
        id: `out_${contentHash.slice("sha256:".length, 39)}`,
        contentHash,
        entries: input.entries.length,
      };
    },

    async release() {
      // Published blobs stay; nothing else is held per binding.
    },

    async abort() {
      // Unpublished blobs are content-addressed and harmless; a real store would expire them.
    },
  };
}
