import {
  ArchiveRejectedError,
  LimitExceededError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * Longest workspace path a snapshot holds, in bytes: the sandbox reads each entry as `./<path>`, which with its
 * NUL must fit Linux's PATH_MAX of 4,096 bytes. A longer path is refused, never skipped.
 */
export const MAX_PATH_BYTES = 4093;

/** Bytes a regular file may claim beyond the blocks it holds before it counts as sparse. */
export const MAX_HOLE_BYTES = 1024 * 1024;

/** The entry as errors name it: its workspace path, at most 256 characters. */
const named = (path: string) => path.replace(/^\.\//, "").slice(0, 256);

/** A path longer than {@link MAX_PATH_BYTES}: `archive_rejected`, reason `name_too_long`. */
export function nameTooLong(path: string): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message:
      `workspace entry ${JSON.stringify(named(path))} has a path longer than ${MAX_PATH_BYTES} bytes (PATH_MAX), ` +
      "which the sandbox cannot read: a checkpoint refuses it rather than leave it out",
    context: { entry: named(path), reason: "name_too_long" },
  });
}

/** A name whose bytes are not text a tree holds: `archive_rejected`, reason `invalid_name`. */
export function invalidName(path: string, detail: string): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `workspace entry ${JSON.stringify(named(path))} rejected: ${detail}`,
    context: { entry: named(path), reason: "invalid_name" },
  });
}

/** A fifo, socket or device: `archive_rejected`, reason `unsupported_type`. */
export function unsupportedType(path: string, type: string): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `workspace entry ${JSON.stringify(named(path))} is of a kind a snapshot cannot hold (find type ${type})`,
    context: { entry: named(path), reason: "unsupported_type" },
  });
}

/** A file whose apparent size exceeds what it holds by more than {@link MAX_HOLE_BYTES}: reason `sparse_file`. */
export function sparseFile(path: string, size: number, allocated: number): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message:
      `workspace entry ${JSON.stringify(named(path))} is a sparse file (${size} bytes, ${allocated} allocated): a ` +
      "snapshot stores every byte of a file, so it is refused rather than stored at its apparent size " +
      "(write it densely, or exclude it)",
    context: { entry: named(path), reason: "sparse_file", size, allocated },
  });
}

/** An entry listed that the sandbox could not read (it vanished, or reading it failed): `sandbox_failed`. */
export function unreadableEntry(path: string, detail: string): SandboxFailedError {
  return new SandboxFailedError({
    message:
      `workspace entry ${JSON.stringify(named(path))} was listed but could not be read for the checkpoint ` +
      `(${detail.slice(0, 200)}): refused rather than left out`,
    context: { entry: named(path), reason: "unreadable" },
  });
}

/** A file whose bytes changed while the checkpoint read it: `sandbox_failed`, reason `changed_during_capture`. */
export function changedDuringCapture(path: string): SandboxFailedError {
  return new SandboxFailedError({
    message: `workspace entry ${JSON.stringify(named(path))} changed while the checkpoint read it; take the checkpoint again`,
    context: { entry: named(path), reason: "changed_during_capture" },
  });
}

/** More entries than the snapshot allows: `limit_exceeded`. */
export function tooManyEntries(max: number, actual: number): LimitExceededError {
  return new LimitExceededError({
    message: `the workspace holds ${actual} entries, more than the ${max} a snapshot allows`,
    context: { limit: "maxEntries", max, actual },
  });
}
