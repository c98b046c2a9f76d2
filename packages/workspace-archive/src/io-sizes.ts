import { MIB } from "./archive-limits.js";

/** Read size for large files and archive files. */
export const IO_CHUNK_BYTES = MIB;
/** Files up to this size are read or written in one call instead of a stream. */
export const SMALL_FILE_BYTES = 256 * 1024;
