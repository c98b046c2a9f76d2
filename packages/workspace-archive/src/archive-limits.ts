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
