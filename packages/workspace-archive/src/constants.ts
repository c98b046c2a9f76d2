/** One mebibyte. */
export const MIB = 1024 * 1024;
/** One gibibyte. */
export const GIB = 1024 * MIB;

/** Default extraction and inspection limits. */
export const DEFAULT_LIMITS = Object.freeze({
  /** Entries of any type, the root entry included. */
  maxEntries: 1_000_000,
  /** Sum of the sizes of all regular files. */
  maxBytes: 10 * GIB,
  /** Size of one regular file. */
  maxEntryBytes: 10 * GIB,
});

/** Folder, relative to the archive root, that holds the chunks of files larger than a split part. */
export const DEFAULT_CHUNK_DIRECTORY = ".oma-chunks";

/** Smallest part `splitArchive` accepts: room for a long-name header, one data block and the end marker. */
export const MIN_PART_BYTES = 16 * 1024;

/** Tar block size. */
export const BLOCK = 512;
/** The end-of-archive marker: two zero blocks. */
export const END_OF_ARCHIVE_BYTES = 2 * BLOCK;

/** Read size for large files and archive files. */
export const IO_CHUNK_BYTES = MIB;
/** Files up to this size are read or written in one call instead of a stream. */
export const SMALL_FILE_BYTES = 256 * 1024;

/** Rounds `size` up to a whole number of tar blocks. */
export function padToBlock(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}
