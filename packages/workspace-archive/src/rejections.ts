import {
  ArchiveRejectedError,
  LimitExceededError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ArchiveLimits } from "./options.js";

/** Why an archive entry was refused; carried as `context.reason` of an `archive_rejected` error. */
export type RejectionReason =
  | "empty_name"
  | "absolute_name"
  | "parent_segment"
  | "invalid_name"
  | "root_not_directory"
  | "unsupported_type"
  | "symlink_escape"
  | "write_through_symlink"
  | "hardlink_escape"
  | "hardlink_target_missing"
  | "entry_conflict"
  | "corrupt_archive";

/** Builds the `archive_rejected` error for one entry; the message and context name the entry. */
export function rejectEntry(
  entry: string,
  reason: RejectionReason,
  detail: string,
): ArchiveRejectedError {
  return new ArchiveRejectedError({
    message: `archive entry ${JSON.stringify(entry)} rejected: ${detail}`,
    context: { entry, reason },
  });
}

/** Builds the `archive_rejected` error for an archive that cannot be parsed. */
export function rejectCorrupt(cause: unknown, entry: string | null): ArchiveRejectedError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ArchiveRejectedError({
    message: `archive is corrupt${entry === null ? "" : ` after entry ${JSON.stringify(entry)}`}: ${detail}`,
    context: { reason: "corrupt_archive", entry },
    cause,
  });
}

/** Builds the `limit_exceeded` error for the entry that crossed `limit`. */
export function limitExceeded(
  entry: string,
  limit: keyof ArchiveLimits,
  max: number,
  actual: number,
): LimitExceededError {
  const noun = limit === "maxEntries" ? "entries" : "bytes";
  return new LimitExceededError({
    message: `archive entry ${JSON.stringify(entry)} exceeds ${limit}: ${actual} ${noun} > ${max}`,
    context: { entry, limit, max, actual },
  });
}
