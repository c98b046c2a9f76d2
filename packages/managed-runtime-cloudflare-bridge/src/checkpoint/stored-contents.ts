import type { PackLocation, PackRef } from "./manifest.js";

/** The contents a session has stored, by sha256: where each lies (null: a blob of its own). */
export interface StoredContents {
  /** How many distinct contents are known. */
  readonly size: number;
  /** Where the content lies, null for a blob of its own, undefined when not known to be stored. */
  get(sha256: string): PackLocation | null | undefined;
}

/** Bytes of one digest. */
const DIGEST = 32;
const OWN_BLOB = -1;
/** An offset too large for 32 bits: it is kept in a map by entry instead. */
const LARGE_OFFSET = 0xffffffff;

/**
 * Collects contents for a {@link StoredContents}: 32-byte digests in one growing buffer with a pack index
 * and a 32-bit offset each (36 bytes a content, growing by half; a few packs as objects), sorted once and
 * searched by halves, so a workspace of any number of files costs no object per file.
 */
export function createStoredContentsBuilder() {
  let digests = Buffer.alloc(DIGEST * 1024);
  let packIndex = new Int32Array(1024);
  let offsets = new Uint32Array(1024);
  // Offsets only a hostile or huge pack reaches, by the index of their content.
  let largeOffsets = new Map<number, number>();
  let count = 0;
  let built: StoredContents | undefined;
  const packs: PackRef[] = [];
  const packIndexes = new Map<string, number>();

  const grow = () => {
    // By half, not doubling: a first checkpoint's sets are the driver's largest, and a copy is alive while it grows.
    const capacity = Math.ceil(packIndex.length * 1.5);
    const nextDigests = Buffer.alloc(DIGEST * capacity);
    digests.copy(nextDigests);
    digests = nextDigests;
    const nextPacks = new Int32Array(capacity);
    nextPacks.set(packIndex);
    packIndex = nextPacks;
    const nextOffsets = new Uint32Array(capacity);
    nextOffsets.set(offsets);
    offsets = nextOffsets;
  };

  return {
    /** Records that `sha256` is stored at `location` (null: its own blob). */
    add(sha256: string, location: PackLocation | null): void {
      if (built) throw new Error("stored contents: add after build");
      if (count === packIndex.length) grow();
      digests.write(sha256, count * DIGEST, DIGEST, "hex");
      if (location) {
        let index = packIndexes.get(location.pack.sha256);
        if (index === undefined) {
          packIndexes.set(location.pack.sha256, (index = packs.length));
          packs.push(location.pack);
        }
        packIndex[count] = index;
        if (location.offset < LARGE_OFFSET) offsets[count] = location.offset;
        else {
          offsets[count] = LARGE_OFFSET;
          largeOffsets.set(count, location.offset);
        }
      } else packIndex[count] = OWN_BLOB;
      count += 1;
    },
    /**
     * Sorts what was added (the first of equal digests wins) and returns the searchable set. The builder lets
     * go of its own buffers: it is done, and a second call answers the same set.
     */
    build(): StoredContents {
      if (built) return built;
      // Sorted by the digests' first four bytes as numbers (uniform, so ties are rare), then by the whole digest.
      const heads = new Uint32Array(count);
      for (let index = 0; index < count; index += 1)
        heads[index] = digests.readUInt32BE(index * DIGEST);
      const order = new Uint32Array(count);
      for (let index = 0; index < count; index += 1) order[index] = index;
      const whole = (left: number, right: number) =>
        digests.compare(
          digests,
          right * DIGEST,
          (right + 1) * DIGEST,
          left * DIGEST,
          (left + 1) * DIGEST,
        );
      order.sort(
        (left, right) =>
          (heads[left] as number) - (heads[right] as number) || whole(left, right) || left - right,
      );
      const sorted = Buffer.alloc(count * DIGEST);
      const sortedPacks = new Int32Array(count);
      const sortedOffsets = new Uint32Array(count);
      const sortedLarge = new Map<number, number>();
      let kept = 0;
      for (let position = 0; position < count; position += 1) {
        const index = order[position] as number;
        // The first of equal digests wins.
        if (
          kept > 0 &&
          digests.compare(
            sorted,
            (kept - 1) * DIGEST,
            kept * DIGEST,
            index * DIGEST,
            (index + 1) * DIGEST,
          ) === 0
        )
          continue;
        digests.copy(sorted, kept * DIGEST, index * DIGEST, (index + 1) * DIGEST);
        sortedPacks[kept] = packIndex[index] as number;
        sortedOffsets[kept] = offsets[index] as number;
        if (offsets[index] === LARGE_OFFSET)
          sortedLarge.set(kept, largeOffsets.get(index) as number);
        kept += 1;
      }
      digests = Buffer.alloc(0);
      packIndex = new Int32Array(0);
      offsets = new Uint32Array(0);
      largeOffsets = new Map();
      count = 0;
      built = searchable(
        sorted.subarray(0, kept * DIGEST),
        sortedPacks.subarray(0, kept),
        sortedOffsets.subarray(0, kept),
        sortedLarge,
        packs,
      );
      return built;
    },
  };
}

/** An empty set: nothing known to be stored. */
export const NO_STORED_CONTENTS: StoredContents = { size: 0, get: () => undefined };

/** Contents either set knows (`first` answers where both do); its size counts each set's own. */
export function unionOf(first: StoredContents, second: StoredContents): StoredContents {
  return {
    size: first.size + second.size,
    get(sha256) {
      const location = first.get(sha256);
      return location === undefined ? second.get(sha256) : location;
    },
  };
}

function searchable(
  digests: Buffer,
  packIndex: Int32Array,
  offsets: Uint32Array,
  largeOffsets: ReadonlyMap<number, number>,
  packs: readonly PackRef[],
): StoredContents {
  const size = packIndex.length;
  const wanted = Buffer.alloc(DIGEST);
  const headOf = (index: number) => digests.readUInt32BE(index * DIGEST);
  return {
    size,
    get(sha256) {
      if (sha256.length !== DIGEST * 2 || wanted.write(sha256, 0, DIGEST, "hex") !== DIGEST)
        return undefined;
      const head = wanted.readUInt32BE(0);
      // The first digest whose head is not below the wanted one, then each with the same head.
      let low = 0;
      let high = size;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (headOf(middle) < head) low = middle + 1;
        else high = middle;
      }
      for (let index = low; index < size && headOf(index) === head; index += 1) {
        if (digests.compare(wanted, 0, DIGEST, index * DIGEST, (index + 1) * DIGEST) !== 0)
          continue;
        const pack = packIndex[index] as number;
        if (pack === OWN_BLOB) return null;
        const offset = offsets[index] as number;
        return {
          pack: packs[pack] as PackRef,
          offset: offset === LARGE_OFFSET ? (largeOffsets.get(index) as number) : offset,
        };
      }
      return undefined;
    },
  };
}
