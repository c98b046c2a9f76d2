export { packDirectory, type PackDirectoryOptions, type PackDigest, type PackedDirectory } from "./pack-directory.js";
export { extractArchive, type ExtractArchiveOptions, type ExtractionResult } from "./extract-archive.js";
export { inspectArchive, type InspectArchiveOptions, type ArchiveInspection, type ArchiveSummary } from "./inspect-archive.js";
export type { AdmittedEntry as ArchiveEntryInfo, ArchiveEntryKind } from "./entry-guard.js";
export type { ArchiveLimits, ReadArchiveOptions } from "./options.js";
export type { RejectionReason } from "./rejections.js";
export { type ArchiveSource, toNodeReadable, toWebStream } from "./archive-source.js";
export { DEFAULT_LIMITS, DEFAULT_CHUNK_DIRECTORY, MIN_PART_BYTES } from "./constants.js";
