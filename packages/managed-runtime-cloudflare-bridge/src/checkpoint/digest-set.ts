/** Bytes of one digest. */
const DIGEST = 32;
/** The table grows (doubles) once it is this full. */
const MAX_LOAD = 0.7;

/** A set of sha256 digests (hex) in one buffer: about 46 bytes a digest, no object per digest. */
export interface DigestSet {
  /** How many digests the set holds. */
  readonly size: number;
  /** Adds `sha256`; returns false when it was there already. */
  add(sha256: string): boolean;
}

/**
 * An open-addressed table of 32-byte digests, probed linearly from the digest's first four bytes (uniform
 * for sha256). Checkpoints see each content once with it, whatever the number of files.
 */
export function createDigestSet(initialCapacity = 1024): DigestSet {
  let capacity = 1;
  while (capacity < initialCapacity) capacity *= 2;
  let table = Buffer.alloc(capacity * DIGEST);
  let used = new Uint8Array(capacity);
  let size = 0;
  const wanted = Buffer.alloc(DIGEST);

  /** The slot holding the digest in `wanted`, or the empty slot where it belongs. */
  const slotOf = (
    digests: Buffer,
    occupied: Uint8Array,
    slots: number,
    digest: Buffer,
    at: number,
  ) => {
    let slot = digest.readUInt32BE(at) & (slots - 1);
    while (
      occupied[slot] === 1 &&
      digest.compare(digests, slot * DIGEST, (slot + 1) * DIGEST, at, at + DIGEST) !== 0
    )
      slot = (slot + 1) & (slots - 1);
    return slot;
  };

  const grow = () => {
    const slots = capacity * 2;
    const digests = Buffer.alloc(slots * DIGEST);
    const occupied = new Uint8Array(slots);
    for (let old = 0; old < capacity; old += 1) {
      if (used[old] !== 1) continue;
      const slot = slotOf(digests, occupied, slots, table, old * DIGEST);
      table.copy(digests, slot * DIGEST, old * DIGEST, (old + 1) * DIGEST);
      occupied[slot] = 1;
    }
    table = digests;
    used = occupied;
    capacity = slots;
  };

  return {
    get size() {
      return size;
    },
    add(sha256) {
      if (sha256.length !== DIGEST * 2 || wanted.write(sha256, 0, DIGEST, "hex") !== DIGEST)
        throw new TypeError("not a sha256 digest in hex");
      const slot = slotOf(table, used, capacity, wanted, 0);
      if (used[slot] === 1) return false;
      wanted.copy(table, slot * DIGEST);
      used[slot] = 1;
      size += 1;
      if (size > capacity * MAX_LOAD) grow();
      return true;
    },
  };
}
