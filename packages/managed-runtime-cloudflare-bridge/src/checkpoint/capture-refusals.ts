import {
  ArchiveRejectedError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * Longest workspace path a checkpoint holds, in bytes: the sandbox reads each entry as `./<path>`, which
 * with its NUL must fit Linux's PATH_MAX of 4,096 bytes. A longer path is refused, never skipped.
 */
export const MAX_PATH_BYTES = 4093;

/**
 * Bytes a regular file may claim beyond the blocks it holds before it counts as sparse: a checkpoint stores
 * every file densely, so a file of holes is refused rather than stored at its apparent size.
 */
export const MAX_HOLE_BYTES = 1024 * 1024;

/** The entry as errors name it: its workspace path, without `./`, at most 256 characters. */
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

/** A name or link target whose bytes are not the text a manifest holds: `archive_rejected`, `invalid_name`. */
export function invalidName(path: string, detail: string): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `workspace entry ${JSON.stringify(named(path))} rejected: ${detail}`,
    context: { entry: named(path), reason: "invalid_name" },
  });
}

/** A file whose apparent size exceeds what it holds by more than {@link MAX_HOLE_BYTES}: `archive_rejected`, `sparse_file`. */
export function sparseFile(path: string, size: number, allocated: number): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message:
      `workspace entry ${JSON.stringify(named(path))} is a sparse file (${size} bytes, ${allocated} allocated): a checkpoint stores ` +
      "every byte of a file, so its holes would be stored as zeros; refused rather than stored at its apparent size (write it densely, or exclude it)",
    context: { entry: named(path), reason: "sparse_file", size, allocated },
  });
}

/** An entry the walk listed that the sandbox could not read (it vanished, or reading it failed): `sandbox_failed`. */
export function unreadableEntry(path: string, detail: string): SandboxFailedError {
  return new SandboxFailedError({
    message:
      `workspace entry ${JSON.stringify(named(path))} was listed but could not be read for the checkpoint ` +
      `(${detail.slice(0, 200)}): refused rather than left out`,
    context: { entry: named(path), reason: "unreadable" },
  });
}
