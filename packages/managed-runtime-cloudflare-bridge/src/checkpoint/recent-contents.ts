/** Slots of the table: 2.6 MiB in all, whatever the number of files. */
const SLOTS = 1 << 16;
const DIGEST = 32;
const EMPTY = -2;
const OWN_BLOB = -1;

/** Where a content met earlier in a checkpoint went: a pack (by its sequence number) and offset, or null for a blob of its own. */
export type RecentContent = { readonly pack: number; readonly offset: number } | null;

/**
 * A fixed-size memory of contents stored lately in one checkpoint, by sha256: a direct-mapped table of 32-byte
 * digests, where a newcomer replaces whatever shared its slot. A duplicate met while it is still remembered
 * is referenced instead of stored twice; one forgotten is only stored again, so memory stays bounded at any
 * number of files.
 */
export function createRecentContents() {
  const digests = Buffer.alloc(SLOTS * DIGEST);
  const packs = new Int32Array(SLOTS).fill(EMPTY);
  const offsets = new Uint32Array(SLOTS);
  const wanted = Buffer.alloc(DIGEST);
  const slotOf = (sha256: string) => {
    wanted.write(sha256, 0, DIGEST, "hex");
    return wanted.readUInt32BE(0) & (SLOTS - 1);
  };
  return {
    /** Remembers where `sha256` went (null: a blob of its own). */
    add(sha256: string, where: RecentContent): void {
      const slot = slotOf(sha256);
      wanted.copy(digests, slot * DIGEST);
      packs[slot] = where === null ? OWN_BLOB : where.pack;
      offsets[slot] = where === null ? 0 : where.offset;
    },
    /** Where `sha256` went, if it is still remembered; undefined when not. */
    get(sha256: string): RecentContent | undefined {
      const slot = slotOf(sha256);
      const pack = packs[slot] as number;
      if (pack === EMPTY || wanted.compare(digests, slot * DIGEST, (slot + 1) * DIGEST) !== 0)
        return undefined;
      return pack === OWN_BLOB ? null : { pack, offset: offsets[slot] as number };
    },
  };
}
