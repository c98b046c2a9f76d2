/** Tar block size. */
export const BLOCK = 512;
/** The end-of-archive marker: two zero blocks. */
export const END_OF_ARCHIVE_BYTES = 2 * BLOCK;

/** Rounds `size` up to a whole number of tar blocks. */
export function padToBlock(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}
