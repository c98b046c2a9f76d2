import {
  CapabilityUnsupportedError,
  OUTPUTS_MOUNT_PATH,
  type SessionOutputEntryCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime, SandboxPort } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "../abort.js";
import { digestStream } from "../digest.js";
import { providerFailure } from "../runtime-registry.js";
import { type OutputLimits, maxBytesExceeded } from "./output-limits.js";
import { listOutputFiles } from "./output-listing.js";

/**
 * Opens an output file as a stream: `readFileStream` when the sandbox has it, else `readFileBytes`
 * (one file in memory at a time). A sandbox with neither cannot collect outputs.
 */
export async function openOutputFile(
  sandbox: SandboxPort,
  logicalPath: string,
): Promise<ReadableStream<Uint8Array>> {
  const path = `${OUTPUTS_MOUNT_PATH}/${logicalPath}`;
  try {
    if (sandbox.readFileStream) return await sandbox.readFileStream(path);
    if (sandbox.readFileBytes) return bytesStream(await sandbox.readFileBytes(path));
  } catch (error) {
    throw providerFailure(error, `reading output file ${logicalPath} failed`, { logicalPath });
  }
  throw new CapabilityUnsupportedError({
    message: "collecting outputs needs readFileStream or readFileBytes on the sandbox",
  });
}

/** A stream of one chunk. */
export function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** Lists, hashes and sorts every output file, streaming one file at a time. */
export async function collectOutputEntries(
  runtime: ManagedSandboxRuntime,
  limits: OutputLimits,
  signal: AbortSignal,
): Promise<SessionOutputEntryCandidate[]> {
  const names = (await listOutputFiles(runtime, { maxFiles: limits.maxFiles, signal })).sort();
  const entries: SessionOutputEntryCandidate[] = [];
  let total = 0;
  for (const logicalPath of names) {
    throwIfAborted(signal, "output collect");
    const before = total;
    const digest = await digestStream(await openOutputFile(runtime, logicalPath), {
      signal,
      onProgress: (size) => {
        if (before + size > limits.maxBytes) throw maxBytesExceeded(limits.maxBytes);
      },
    });
    total += digest.size;
    entries.push({ logicalPath, contentHash: `sha256:${digest.hex}`, size: digest.size });
  }
  return entries;
}
