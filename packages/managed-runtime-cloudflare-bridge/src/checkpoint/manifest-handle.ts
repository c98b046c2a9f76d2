import {
  IntegrityError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { manifestKeyOf } from "./blob-keys.js";
import { portableHandle } from "./checkpoint-handle.js";

/** Metadata `format` of an incremental (manifest + blobs) checkpoint handle. */
export const MANIFEST_HANDLE_FORMAT = "manifest";

/** What an incremental checkpoint handle carries: the manifest's hash and size, and the owning session's key. */
export interface ManifestHandleMetadata {
  readonly format: typeof MANIFEST_HANDLE_FORMAT;
  readonly session: string;
  readonly contentHash: string;
  readonly size: number;
  /** Derived from the prefix, session and hash, never read from the handle. */
  readonly manifestKey: string;
}

const schema = z
  .object({
    format: z.literal(MANIFEST_HANDLE_FORMAT),
    session: z.string().regex(/^[0-9a-f]{32}$/),
    contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    size: z.number().int().positive().refine(Number.isSafeInteger),
  })
  .strict();

/** Builds the handle of an incremental checkpoint: its id is the manifest's hash. */
export function createManifestHandle(input: {
  provider: string;
  sandboxId: string;
  session: string;
  sha256: string;
  size: number;
}): SandboxCheckpointHandle {
  return portableHandle(input, {
    format: MANIFEST_HANDLE_FORMAT,
    session: input.session,
    size: input.size,
  });
}

/** Whether a handle's metadata names the manifest format (older handles name a full tar). */
export function isManifestHandle(handle: SandboxCheckpointHandle): boolean {
  return handle.metadata?.format === MANIFEST_HANDLE_FORMAT;
}

/** Validates an incremental checkpoint handle; the manifest key is derived, so a handle cannot point elsewhere. */
export function readManifestHandle(
  handle: SandboxCheckpointHandle,
  expected: { keyPrefix: string; maxBytes: number },
): ManifestHandleMetadata {
  const parsed = schema.safeParse(handle.metadata ?? {});
  if (
    !parsed.success ||
    parsed.data.contentHash !== handle.checkpointId ||
    parsed.data.size > expected.maxBytes
  ) {
    throw new IntegrityError({
      message: "bridge checkpoint handle is malformed",
      context: { checkpointId: handle.checkpointId.slice(0, 80) },
    });
  }
  const sha256 = parsed.data.contentHash.slice("sha256:".length);
  return {
    ...parsed.data,
    format: MANIFEST_HANDLE_FORMAT,
    manifestKey: manifestKeyOf(expected.keyPrefix, parsed.data.session, sha256),
  };
}
