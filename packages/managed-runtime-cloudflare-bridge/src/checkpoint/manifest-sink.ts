import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createBufferedSpool } from "./buffered-spool.js";
import type { ManifestEntry, ManifestFile, PackRef } from "./manifest.js";
import { MANIFEST_V3_HEADER, packLine, wireLine } from "./manifest-lines.js";
import type { WrittenManifest } from "./manifest-writer.js";
import { comparePaths } from "./split-records.js";

/** Encoded lines gathered before they go to the spool in one write. */
const WRITE_BYTES = 64 * 1024;
/** First size of the buffer of encoded lines; it doubles while lines wait for a pack. */
const FIRST_PENDING_BYTES = 256 * 1024;

/** A file whose content went into one of this checkpoint's packs, known by the pack's sequence number. */
export type PackedFile = Omit<ManifestFile, "location">;

/** A manifest written item by item as a checkpoint produces them (see {@link createManifestSink}). */
export interface ManifestSink {
  /** Encodes one entry (in manifest order); a file with a location names a pack stored before this checkpoint. */
  add(entry: ManifestEntry): void;
  /**
   * Encodes a file whose content lies at `offset` of this checkpoint's pack `sequence`, sealed or not yet:
   * its line, and every line after it, reaches the spool once that pack is {@link sealed}.
   */
  addPacked(file: PackedFile, sequence: number, offset: number): void;
  /** This checkpoint's pack `sequence` was sealed as `pack`: the lines waiting for it may go. */
  sealed(sequence: number, pack: PackRef): void;
  /** Bytes of encoded lines waiting for a pack that is not sealed yet. */
  readonly waitingBytes: number;
  /** Writes what may go and waits while it is on its way to the spool: call it between batches of adds. */
  flushed(): Promise<void>;
  /** Writes the rest and closes the spool; the caller publishes or disposes the result. */
  finish(): Promise<WrittenManifest>;
  /** Deletes the spool (after a failure before {@link finish}). */
  dispose(): Promise<void>;
}

/** Where a pack's declaration goes (before its first use) and, once sealed, what it declares. */
interface Declaration {
  at: number;
  pack: PackRef | null;
}

/**
 * A /3 manifest written to a spool as its items arrive, for a checkpoint that learns the workspace as it
 * streams rather than from a listing read beforehand. A pack is declared by a line before its first use and
 * named by its index after; a pack still being filled has no name yet, so its first user's line and every
 * line after it wait until it is sealed. They wait as encoded bytes in one reused buffer, not as objects:
 * thousands of entries wait for each pack, long enough that objects would outlive young collections and
 * pile up in the old generation. Nothing else grows with the workspace.
 */
export async function createManifestSink(spoolOptions: {
  readonly maxBytes: number;
  readonly directory?: string;
}): Promise<ManifestSink> {
  const spool = await createBufferedSpool({ ...spoolOptions, hash: true });
  let pending = Buffer.allocUnsafeSlow(FIRST_PENDING_BYTES);
  let length = 0;
  // Declarations not written yet, in line order (the first ones sealed, or waiting).
  let declarations: Declaration[] = [];
  // Pack index by this checkpoint's sequence number, and by sha256 for packs stored before.
  const ownPacks = new Map<number, Declaration & { readonly index: number }>();
  const storedPacks = new Map<string, number>();
  let packCount = 0;
  let previous: string | null = null;
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown = null;

  const append = (line: string) => {
    const most = line.length * 3 + 1;
    if (length + most > pending.byteLength) {
      const grown = Buffer.allocUnsafeSlow(Math.max(pending.byteLength * 2, length + most));
      pending.copy(grown, 0, 0, length);
      pending = grown;
    }
    length += pending.write(line, length, "utf8");
    pending[length] = 0x0a;
    length += 1;
  };
  const inOrder = (path: string) => {
    if (previous !== null && comparePaths(previous, path) >= 0)
      throw new SandboxFailedError({
        message: "workspace entries are out of order",
        context: { path: path.slice(0, 256) },
      });
    previous = path;
  };
  // Bytes before the first declaration still waiting for its pack.
  const releasable = () =>
    declarations.find((declaration) => declaration.pack === null)?.at ?? length;

  /** Writes every line that may go (at least `minimum` bytes of them, else none), then keeps the rest at the buffer's start. */
  const release = async (minimum: number) => {
    const bound = releasable();
    if (bound < minimum) return;
    let from = 0;
    for (const declaration of declarations) {
      if (declaration.at > bound || declaration.pack === null) break;
      await spool.write(pending.subarray(from, declaration.at));
      await spool.writeText(`${packLine(declaration.pack)}\n`);
      from = declaration.at;
    }
    await spool.write(pending.subarray(from, bound));
    pending.copyWithin(0, bound, length);
    length -= bound;
    declarations = declarations.filter((declaration) => declaration.at >= bound);
    for (const declaration of declarations) declaration.at -= bound;
  };
  // Releases run one after another, each after the adds before it; the buffer is only compacted by them.
  const queueRelease = (minimum: number) => {
    writing = writing
      .then(() => release(minimum))
      .catch((error: unknown) => void (failure ??= error));
  };

  append(MANIFEST_V3_HEADER.slice(0, -1));
  return {
    add(entry) {
      inOrder(entry.path);
      if (entry.type !== "file" || !entry.location) return append(wireLine(entry));
      const { pack, offset } = entry.location;
      let index = storedPacks.get(pack.sha256);
      if (index === undefined) {
        index = packCount++;
        storedPacks.set(pack.sha256, index);
        append(packLine(pack));
      }
      append(wireLine(entry, { pack: index, offset }));
    },
    addPacked(file, sequence, offset) {
      inOrder(file.path);
      let own = ownPacks.get(sequence);
      if (!own) {
        own = { at: length, pack: null, index: packCount++ };
        ownPacks.set(sequence, own);
        declarations.push(own);
      }
      append(wireLine(file, { pack: own.index, offset }));
    },
    sealed(sequence, pack) {
      const own = ownPacks.get(sequence);
      // Every pack holds the content of the file that opened it, so its first use came before its seal.
      if (!own)
        throw new SandboxFailedError({ message: "a pack was sealed before any entry used it" });
      own.pack = pack;
    },
    get waitingBytes() {
      return length - releasable();
    },
    async flushed() {
      if (releasable() >= WRITE_BYTES) queueRelease(WRITE_BYTES);
      await writing;
      if (failure) throw failure;
    },
    async finish() {
      queueRelease(0);
      await writing;
      if (failure) throw failure;
      if (length > 0)
        throw new SandboxFailedError({
          message: "manifest lines were left waiting for a pack that was never sealed",
        });
      const size = await spool.finish();
      return {
        spool: { read: () => spool.read(), dispose: () => spool.dispose() },
        digest: { sha256: spool.sha256(), size },
      };
    },
    dispose: () => spool.dispose(),
  };
}
