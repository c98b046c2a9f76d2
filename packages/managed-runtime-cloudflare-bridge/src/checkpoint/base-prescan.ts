import { type BlobStore, bodyChunks } from "@open-managed-agents/blob-store";
import type { ManifestHandleMetadata } from "./manifest-handle.js";
import type { PackLocation, PackRef } from "./manifest.js";
import { MANIFEST_V3_HEADER, MAX_LINE_BYTES } from "./manifest-lines.js";
import { verifiedChunks } from "./manifest-store.js";
import {
  type BaseScan,
  type BaseVisitor,
  NO_VISITOR,
  hashAt,
  hashHead,
  parseEntry,
  plainEntry,
  refusalOf,
  scanLines,
} from "./base-scan.js";
import { type LineFields, readLineFields } from "./line-fields.js";
import { findLine, lastPath, readPlacedFields, sameFields } from "./placed-lines.js";
import { compareKeys } from "./split-records.js";
import { type TemporaryFile, openTemporaryFile } from "./temporary-file.js";

/** Bytes of whole lines the second read searches at a time (plus room for one line cut at the end). */
const BLOCK_BYTES = 256 * 1024;
/**
 * One record of the hash table, three 32-bit words in the platform's order: the first 32 bits of a packed
 * content's hash, then where its line starts in the copy (low word, high word). Read as a Uint32Array.
 */
const RECORD_BYTES = 12;
const TWO_32 = 2 ** 32;
/** Records written or read at a time. */
const TABLE_BATCH_BYTES = RECORD_BYTES * 5461;

/**
 * A base manifest read once ahead by {@link prescanBase}: its totals and objects, and its bytes, hash-checked,
 * in a file of the driver's own, for the second read that meets the visitor's paths.
 */
export interface PrescannedBase {
  readonly count: number;
  readonly bytes: number;
  readonly objects: BaseScan["objects"];
  /** Whether every line read by position as in full, so the second read searches instead of reading every line. */
  readonly placed: boolean;
  /**
   * What `scanBase` finds for `contents` and `visitor`, from the copy. When every line reads by position,
   * each path asked for is found by a binary search among the lines of the block of the copy that holds it,
   * and each content by the table of packed contents' hash heads the first read wrote; only the lines found
   * are parsed. Otherwise a full scan of the copy. Once at most.
   */
  scan(contents: ReadonlySet<string>, visitor: BaseVisitor): Promise<BaseScan>;
  /** Closes (and so removes) the copy and the table. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Reads a /3 base manifest the way `scanBase` does, without the paths or contents to look for: so a
 * later checkpoint reads its base while the sandbox walks the workspace, and only a light second read is
 * left for when the sandbox's changes are known. Its bytes go to a temporary file under `directory` as they
 * stream (hash-checked before this resolves), the head of each packed content's hash and where its line
 * starts to a second one, and each line is read a second way, by position alone (see `readPlacedFields`):
 * when every line reads alike both ways, the second read searches. Aborted by `signal`; a malformed base is
 * `integrity_failed`.
 */
export async function prescanBase(
  store: BlobStore,
  base: ManifestHandleMetadata,
  options: { readonly directory?: string; readonly signal?: AbortSignal } = {},
): Promise<PrescannedBase> {
  const refuse = refusalOf(base);
  const copy = await openTemporaryFile(options.directory);
  const table = await openTemporaryFile(options.directory).catch(async (error: unknown) => {
    await copy.close();
    throw error;
  });
  const dispose = async () => void (await Promise.all([copy.close(), table.close()]));
  try {
    const records = createRecordWriter(table);
    let written = 0;
    const copied = async function* () {
      for await (const chunk of verifiedChunks(store, base)) {
        options.signal?.throwIfAborted();
        // Written before the scan reads it: the chunk may be a buffer the next store read refills.
        await Promise.all([copy.writeAt(chunk, written), records.flush()]);
        written += chunk.byteLength;
        yield chunk;
      }
    };
    let placed = true;
    const packs: PackRef[] = [];
    // Where the next line starts in the copy: lines come in order, each followed by its newline.
    let lineAt = MANIFEST_V3_HEADER.length;
    const onLine = (chunk: Buffer, start: number, end: number, line: LineFields) => {
      const at = lineAt;
      lineAt += end - start + 1;
      if (line.kind === "pack")
        packs.push({ sha256: hashAt(chunk, line.shaAt, refuse), size: line.size });
      else if (line.kind === "file" && line.size > 0 && line.pack !== -1)
        records.add(hashHead(chunk, line.shaAt, refuse), at);
      if (placed) placed = sameFields(readPlacedFields(chunk, start, end), line, chunk);
    };
    const first = await scanLines(copied(), refuse, new Set(), NO_VISITOR, onLine);
    await records.flush();
    let used = false;
    return {
      count: first.count,
      bytes: first.bytes,
      objects: first.objects,
      placed,
      async scan(contents, visitor) {
        if (used) throw new Error("a prescanned base is scanned once");
        used = true;
        if (!placed)
          return scanLines(
            bodyChunks(copy.stream(BLOCK_BYTES), BLOCK_BYTES),
            refuse,
            contents,
            visitor,
          );
        const located = await locateContents(
          copy,
          table,
          records.bytes(),
          refuse,
          packs,
          contents,
          first.objects.blobs,
        );
        await meetBySearch(copy, base.size, refuse, visitor);
        return { ...first, contents: located };
      },
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** The hash table's writer: records gather in a batch, written to `file` whenever `flush` is awaited. */
function createRecordWriter(file: TemporaryFile) {
  let batch = new Uint32Array(TABLE_BATCH_BYTES / 4);
  let used = 0;
  const full: Uint32Array[] = [];
  let written = 0;
  return {
    add(head: number, lineAt: number) {
      if (used === batch.length) {
        full.push(batch);
        batch = new Uint32Array(TABLE_BATCH_BYTES / 4);
        used = 0;
      }
      batch[used] = head;
      batch[used + 1] = lineAt % TWO_32;
      batch[used + 2] = Math.floor(lineAt / TWO_32);
      used += RECORD_BYTES / 4;
    },
    async flush() {
      for (const words of [...full.splice(0), batch.subarray(0, used)]) {
        await file.writeAt(
          new Uint8Array(words.buffer, words.byteOffset, words.byteLength),
          written,
        );
        written += words.byteLength;
      }
      used = 0;
    },
    bytes: () => written,
  };
}

/**
 * Where the base places each of `contents`: the first packed line of each in manifest order (found by the
 * hash table: a record whose head matches is read from the copy and parsed), else a blob of its own.
 */
async function locateContents(
  copy: TemporaryFile,
  table: TemporaryFile,
  tableBytes: number,
  refuse: (reason: string) => Error,
  packs: readonly PackRef[],
  contents: ReadonlySet<string>,
  blobs: readonly string[],
): Promise<ReadonlyMap<string, PackLocation | null>> {
  const located = new Map<string, PackLocation | null>();
  if (contents.size === 0) return located;
  // How many of the contents asked for, not yet located, have each head.
  const wanted = new Map<number, number>();
  for (const sha256 of contents) {
    const head = hashHead(Buffer.from(sha256, "latin1"), 0, refuse);
    wanted.set(head, (wanted.get(head) ?? 0) + 1);
  }
  const records = Buffer.from(new ArrayBuffer(TABLE_BATCH_BYTES));
  const words = new Uint32Array(records.buffer);
  const line = Buffer.allocUnsafe(MAX_LINE_BYTES + 1);
  for (let position = 0; position < tableBytes && wanted.size > 0; ) {
    const read = await table.readAt(
      records,
      0,
      Math.min(TABLE_BATCH_BYTES, tableBytes - position),
      position,
    );
    if (read === 0 || read % RECORD_BYTES !== 0) throw refuse("the driver's copy ended early");
    position += read;
    for (let at = 0; at < read / 4; at += RECORD_BYTES / 4) {
      const head = words[at] as number;
      const left = wanted.get(head);
      if (left === undefined) continue;
      const lineAt = (words[at + 1] as number) + (words[at + 2] as number) * TWO_32;
      const length = await copy.readAt(line, 0, line.byteLength, lineAt);
      const end = line.indexOf(0x0a);
      if (end === -1 || end >= length) throw refuse("the driver's copy ended early");
      const fields = readLineFields(line, 0, end, refuse);
      const pack = packs[fields.pack];
      const sha256 = hashAt(line, fields.shaAt, refuse);
      if (!pack) throw refuse("a file placed in a pack not declared before it");
      if (!contents.has(sha256) || located.has(sha256)) continue;
      located.set(sha256, { pack, offset: fields.offset });
      if (left === 1) wanted.delete(head);
      else wanted.set(head, left - 1);
    }
  }
  for (const sha256 of blobs)
    if (contents.has(sha256) && !located.has(sha256)) located.set(sha256, null);
  return located;
}

/**
 * Hands the visitor the base's entry at each of its paths, or null where there is none, reading the copy in
 * blocks of whole lines: a path past the block's last one moves on to the next block, any other is searched
 * for in the block (see `findLine`), and only a line found is parsed.
 */
async function meetBySearch(
  copy: TemporaryFile,
  size: number,
  refuse: (reason: string) => Error,
  visitor: BaseVisitor,
): Promise<void> {
  const buffer = Buffer.allocUnsafe(BLOCK_BYTES + MAX_LINE_BYTES + 1);
  let position = MANIFEST_V3_HEADER.length;
  let filled = 0;
  // Whole lines: buffer[0, end); after them, the start of a line the next block finishes.
  let end = 0;
  const nextBlock = async (): Promise<boolean> => {
    buffer.copy(buffer, 0, end, filled);
    filled -= end;
    end = 0;
    if (position >= size && filled === 0) return false;
    const read = await copy.readAt(
      buffer,
      filled,
      Math.min(BLOCK_BYTES, size - position),
      position,
    );
    position += read;
    filled += read;
    end = filled === 0 ? 0 : buffer.lastIndexOf(0x0a, filled - 1) + 1;
    if (end === 0) throw refuse("the driver's copy ended early");
    return true;
  };
  let have = await nextBlock();
  let last = have ? lastPath(buffer, end) : null;
  for (let path = visitor.next(); path !== null; path = visitor.next()) {
    while (
      have &&
      (last === null || compareKeys(buffer, last.start, last.end, path, 0, path.length) < 0)
    ) {
      have = await nextBlock();
      last = have ? lastPath(buffer, end) : null;
    }
    const line = have ? findLine(buffer, end, path) : null;
    if (!line) {
      await visitor.take(null);
      continue;
    }
    const entry = parseEntry(buffer, line.start, line.end, refuse);
    if (Buffer.compare(Buffer.from(entry.path), path) !== 0)
      throw refuse("an entry that does not parse alike");
    await visitor.take(plainEntry(entry));
  }
}
