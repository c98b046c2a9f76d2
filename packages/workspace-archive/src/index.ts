export {
  packDirectory,
  type PackDirectoryOptions,
  type PackDigest,
  type PackedDirectory,
} from "./pack-directory.js";
export {
  extractArchive,
  type ExtractArchiveOptions,
  type ExtractionResult,
} from "./extract-archive.js";
export {
  inspectArchive,
  type InspectArchiveOptions,
  type ArchiveInspection,
  type ArchiveSummary,
} from "./inspect-archive.js";
export {
  inspectHeaders,
  createHeaderInspection,
  type HeaderInspection,
  type HeaderInspector,
  type ListedHeader,
} from "./inspect-headers.js";
export {
  createTarMemberReader,
  type TarMember,
  type TarMemberReader,
  type TarMemberReaderOptions,
} from "./tar-member-reader.js";
export { type ByteReader, createByteReader } from "./byte-reader.js";
export { splitArchive, type SplitArchive, type SplitArchiveOptions } from "./split-archive.js";
export type { ArchivePart } from "./part-builder.js";
export { type MemberHeader, encodeMemberHeader } from "./tar-header.js";
export { type JoinPlan, joinPlanSchema, parseJoinPlan } from "./join-plan.js";
export { joinPlanCommands, type JoinPlanCommandOptions } from "./join-plan-commands.js";
export { applyJoinPlan } from "./apply-join-plan.js";
export {
  type ArchiveFile,
  type ArchiveSource,
  toNodeReadable,
  toWebStream,
} from "./archive-source.js";
export type { AdmittedEntry as ArchiveEntryInfo, ArchiveEntryKind } from "./entry-guard.js";
export type { ArchiveLimits, ReadArchiveOptions } from "./options.js";
export type { RejectionReason } from "./rejections.js";
export { DEFAULT_LIMITS, DEFAULT_CHUNK_DIRECTORY, MIN_PART_BYTES } from "./archive-limits.js";
export { END_OF_ARCHIVE_BYTES, padToBlock } from "./tar-blocks.js";
export { KEPT_MODE_BITS, isKeptMode, keptMode } from "./mode-policy.js";
export { isUtf8Name, nameProblem } from "./name-bytes.js";
