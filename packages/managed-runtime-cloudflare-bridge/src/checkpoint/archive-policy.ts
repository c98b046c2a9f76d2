import {
  ArchiveRejectedError,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ArchiveInspection,
  type ArchiveLimits,
  type ArchiveSource,
  inspectArchive,
} from "@open-managed-agents/workspace-archive";

/** Where checkpoints are extracted inside the sandbox; absolute symlinks below it stay inside. */
export const SANDBOX_WORKSPACE = "/workspace";

/** Read options every checkpoint archive is held to, on the way in and on the way back. */
export function checkpointReadOptions(limits: ArchiveLimits) {
  return { limits, allowSymlinksOutsideRoot: false, absoluteRoot: SANDBOX_WORKSPACE } as const;
}

/**
 * Reads a whole checkpoint archive (streamed, nothing written) and refuses it with `archive_rejected`
 * when any entry is an absolute name, a `..` segment, a device, FIFO or socket, a link leaving
 * `/workspace`, or crosses a limit (the limit's `limit_exceeded` is the cause).
 */
export async function inspectCheckpointArchive(
  source: ArchiveSource,
  limits: ArchiveLimits,
): Promise<ArchiveInspection> {
  try {
    return await inspectArchive(source, checkpointReadOptions(limits));
  } catch (error) {
    throw asCheckpointRefusal(error);
  }
}

/** A crossed limit (`limit_exceeded`) as the `archive_rejected` it means for a checkpoint; any other error as is. */
export function asCheckpointRefusal(error: unknown): unknown {
  if (!ManagedRuntimeError.hasCode(error, "limit_exceeded")) return error;
  return new ArchiveRejectedError({
    message: `checkpoint archive refused: ${error.message}`,
    context: { reason: "limit_exceeded", ...error.context },
    cause: error,
  });
}
