import {
  IntegrityError,
  ProviderMismatchError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** Metadata a bridge checkpoint handle carries. */
export interface BridgeCheckpointMetadata {
  readonly blobKey: string;
  readonly contentHash: string;
  readonly size: number;
}

const metadataSchema = z.object({
  blobKey: z.string().min(1),
  contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().nonnegative().refine(Number.isSafeInteger),
});

/** A portable filesystem handle whose id is `sha256:<hex>`; `metadata` gets `contentHash` added. */
export function portableHandle(
  input: { provider: string; sandboxId: string; sha256: string },
  metadata: Record<string, string | number>,
): SandboxCheckpointHandle {
  const contentHash = `sha256:${input.sha256}`;
  return {
    provider: input.provider,
    checkpointId: contentHash,
    sourceRuntimeId: input.sandboxId,
    kind: "filesystem",
    scope: "portable",
    metadata: { ...metadata, contentHash },
  };
}

/** Builds the handle of a stored full-tar checkpoint. */
export function createCheckpointHandle(input: {
  provider: string;
  sandboxId: string;
  sha256: string;
  blobKey: string;
  size: number;
}): SandboxCheckpointHandle {
  return portableHandle(input, { blobKey: input.blobKey, size: input.size });
}

/** Validates a handle before any byte is read: provider, kind, scope, metadata and key prefix. */
export function readCheckpointHandle(
  handle: SandboxCheckpointHandle,
  expected: { provider: string; keyPrefix: string; maxBytes: number },
): BridgeCheckpointMetadata {
  if (handle.provider !== expected.provider) {
    throw new ProviderMismatchError({
      message: "checkpoint belongs to another provider",
      context: { expected: expected.provider, actual: handle.provider },
    });
  }
  const parsed = metadataSchema.safeParse(handle.metadata ?? {});
  if (
    !parsed.success ||
    handle.kind !== "filesystem" ||
    handle.scope !== "portable" ||
    parsed.data.contentHash !== handle.checkpointId
  ) {
    throw new IntegrityError({
      message: "bridge checkpoint handle is malformed",
      context: { checkpointId: handle.checkpointId.slice(0, 80) },
    });
  }
  if (
    !parsed.data.blobKey.startsWith(`${expected.keyPrefix}/`) ||
    parsed.data.size > expected.maxBytes
  ) {
    throw new IntegrityError({
      message:
        "bridge checkpoint handle points outside the checkpoint store or over the size limit",
      context: { checkpointId: handle.checkpointId },
    });
  }
  return parsed.data;
}

/** Checkpoint name safe inside a blob key. */
export function safeCheckpointName(name: string | undefined, fallback: string): string {
  const cleaned = (name ?? "")
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .replace(/^[.-]+/, "")
    .slice(0, 80);
  return cleaned || fallback;
}
