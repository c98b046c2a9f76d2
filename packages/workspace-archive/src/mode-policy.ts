/**
 * The mode bits a workspace keeps, wherever an entry is packed, checkpointed, read or restored: read, write
 * and execute for owner, group and others, and the sticky bit. setuid and setgid are dropped: an agent's
 * workspace never grants privileges to whoever runs its files, and no restore writes them.
 */
export const KEPT_MODE_BITS = 0o1777;

/** `mode` (any `st_mode` or tar mode field) reduced to the bits a workspace keeps. */
export function keptMode(mode: number): number {
  return mode & KEPT_MODE_BITS;
}

/** Whether `mode` holds no bit the workspace drops: what a manifest may state. */
export function isKeptMode(mode: number): boolean {
  return (
    Number.isInteger(mode) && mode >= 0 && mode <= KEPT_MODE_BITS && (mode & ~KEPT_MODE_BITS) === 0
  );
}
