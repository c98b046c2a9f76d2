import { ArchiveRejectedError } from "@open-managed-agents/runtime-resource-contract";
import { createByteReader } from "./byte-reader.js";
import { isUtf8Name } from "./name-bytes.js";
import { rejectEntry } from "./rejections.js";
import { BLOCK, padToBlock } from "./tar-blocks.js";

/** One archive member as {@link createTarMemberReader} reads it: long names and pax records already applied. */
export interface TarMember {
  /** The member name as stored (for example `./a.txt` or `./dir/`). */
  readonly name: string;
  /** What the member is; `other` covers devices, FIFOs, sparse and vendor types. */
  readonly type: "file" | "directory" | "symlink" | "link" | "other";
  /** The raw type flag, for messages about `other` members. */
  readonly typeflag: string;
  /** Mode bits as stored (at most 07777 is meaningful). */
  readonly mode: number;
  /** Modification time in whole seconds since the epoch. */
  readonly mtime: number;
  /** Body size; 0 for everything but files. */
  readonly size: number;
  /** Target of a symlink or hardlink; null for other members. */
  readonly linkname: string | null;
}

/** Reads a tar stream member by member, without a stream per member. */
export interface TarMemberReader {
  /** The next member, skipping whatever of the previous body was not read; null at the end of the archive. */
  next(): Promise<TarMember | null>;
  /** The current member's whole body as one buffer: a view of the chunk when it lies in one, so copy what you keep. */
  readBody(): Promise<Buffer>;
  /** The current member's body in pieces as they arrive (views: copy what you keep). */
  bodyChunks(): AsyncGenerator<Buffer>;
  /** Bytes of the archive read so far. */
  readonly position: number;
  /** Stops reading the archive before its end, returning the source's iterator (see `ByteReader.close`). */
  close(): Promise<void>;
}

/** Options of {@link createTarMemberReader}. */
export interface TarMemberReaderOptions {
  /** Longest GNU long name or link target accepted. @default 64 KiB */
  readonly maxNameBytes?: number;
  /** Largest pax extended header accepted. @default 1 MiB */
  readonly maxPaxBytes?: number;
}

const FILE_FLAGS = new Set(["0", "\u0000", "7"]);

/**
 * Parses a ustar, GNU or pax tar stream synchronously over its chunks (headers are decoded in place; a body
 * lying within one chunk is handed out as a view), so an archive of many small members costs no object
 * stream or copy per member. Hand-written for that per-member cost: tar-stream allocates a readable per
 * entry, which dominated the checkpoint of a tree of 200,000 small files. A header whose checksum does not
 * match, a truncated member or an oversized name is `archive_rejected` (`corrupt_archive`).
 */
export function createTarMemberReader(
  source: AsyncIterable<Uint8Array>,
  options: TarMemberReaderOptions = {},
): TarMemberReader {
  const maxNameBytes = options.maxNameBytes ?? 64 * 1024;
  const maxPaxBytes = options.maxPaxBytes ?? 1024 * 1024;
  const reader = createByteReader(source);
  let finished = false;
  /** Body bytes of the current member still unread, and the padding after them. */
  let bodyLeft = 0;
  let paddingLeft = 0;
  let lastName: string | null = null;

  const corrupt = (detail: string) =>
    new ArchiveRejectedError({
      message: `archive is corrupt${lastName === null ? "" : ` after entry ${JSON.stringify(lastName)}`}: ${detail}`,
      context: { reason: "corrupt_archive", entry: lastName },
    });
  const truncated = () => corrupt("the archive ends inside a member");

  /** Exactly `size` bytes (a view when they lie in one chunk); throws when the source ends first. */
  const take = async (size: number): Promise<Buffer> => {
    const bytes = await reader.read(size);
    if (bytes === null) throw truncated();
    return bytes;
  };

  const skip = async (size: number): Promise<void> => {
    if ((await reader.skip(size)) < size) throw truncated();
  };

  /** Skips what is left of the current member: without a wait when it lies in the chunk at hand. */
  const skipRest = async () => {
    const left = bodyLeft + paddingLeft;
    bodyLeft = 0;
    paddingLeft = 0;
    if (left > 0 && reader.readNow(left) === null) await skip(left);
  };

  /** The next header block (without a wait when it lies in the chunk at hand), or null for a zero block. */
  const readHeader = async () => {
    const block = reader.readNow(BLOCK) ?? (await take(BLOCK));
    if (block[0] === 0 && isZero(block)) return null;
    if (!checksumMatches(block)) throw corrupt("a header checksum does not match");
    return block;
  };

  async function* bodyChunks(): AsyncGenerator<Buffer> {
    for await (const piece of reader.chunks(bodyLeft)) {
      bodyLeft -= piece.byteLength;
      yield piece;
    }
    if (bodyLeft > 0) throw truncated();
  }

  return {
    get position() {
      return reader.position;
    },
    async close() {
      finished = true;
      bodyLeft = 0;
      paddingLeft = 0;
      await reader.close();
    },
    async next() {
      if (finished) return null;
      await skipRest();
      let longName: string | null = null;
      let longLink: string | null = null;
      let pax: Record<string, string> = {};
      for (;;) {
        const block = await readHeader();
        if (block === null) {
          finished = true;
          await reader.drain();
          return null;
        }
        const typeflag = String.fromCharCode(block[156] as number);
        const size = readNumber(block, 124, 12, corrupt);
        if (typeflag === "L" || typeflag === "K") {
          if (size > maxNameBytes) throw corrupt(`a long name of ${size} bytes`);
          const body = await take(size);
          await skip(padToBlock(size) - size);
          const value = nameText(body, 0, nulEnd(body));
          if (typeflag === "L") longName = value;
          else longLink = value;
          continue;
        }
        if (typeflag === "x" || typeflag === "g") {
          if (size > maxPaxBytes) throw corrupt(`a pax header of ${size} bytes`);
          const body = await take(size);
          await skip(padToBlock(size) - size);
          if (typeflag === "x") pax = { ...pax, ...parsePax(body, corrupt) };
          continue;
        }
        const ustar =
          block[257] === 0x75 &&
          block[258] === 0x73 &&
          block[259] === 0x74 &&
          block[260] === 0x61 &&
          block[261] === 0x72 &&
          block[262] === 0;
        // The ustar fields are read only when no long name stands in for them (a writer may cut them anywhere).
        const name = pax.path ?? longName ?? ustarName(block, ustar);
        const type = FILE_FLAGS.has(typeflag)
          ? "file"
          : typeflag === "5"
            ? "directory"
            : typeflag === "2"
              ? "symlink"
              : typeflag === "1"
                ? "link"
                : "other";
        const linkTarget =
          type === "symlink" || type === "link"
            ? (pax.linkpath ?? longLink ?? nameText(block, 157, nulEnd(block, 157, 257)))
            : null;
        const bodySize =
          type === "file" || type === "other"
            ? pax.size === undefined
              ? size
              : parsePaxNumber(pax.size, corrupt)
            : 0;
        const mtime =
          pax.mtime === undefined
            ? readNumber(block, 136, 12, corrupt)
            : Math.floor(parsePaxNumber(pax.mtime, corrupt));
        lastName = name;
        bodyLeft = bodySize;
        paddingLeft = padToBlock(bodySize) - bodySize;
        return {
          name,
          type,
          typeflag,
          mode: readNumber(block, 100, 8, corrupt),
          mtime,
          size: type === "file" ? bodySize : 0,
          linkname: linkTarget,
        };
      }
    },
    async readBody() {
      const size = bodyLeft;
      bodyLeft = 0;
      return reader.readNow(size) ?? take(size);
    },
    bodyChunks,
  };
}

const ZERO_BLOCK = Buffer.alloc(BLOCK);

function isZero(block: Buffer): boolean {
  return block.equals(ZERO_BLOCK);
}

/** Unsigned sum with the checksum field read as spaces; old writers used a signed sum, also accepted. */
function checksumMatches(block: Buffer): boolean {
  let unsigned = 8 * 0x20;
  for (let index = 0; index < 148; index += 1) unsigned += block[index] as number;
  for (let index = 156; index < BLOCK; index += 1) unsigned += block[index] as number;
  const stored = readChecksum(block);
  if (stored === unsigned) return true;
  let signed = 8 * 0x20;
  for (let index = 0; index < BLOCK; index += 1) {
    if (index >= 148 && index < 156) continue;
    const byte = block[index] as number;
    signed += byte > 127 ? byte - 256 : byte;
  }
  return stored === signed;
}

/** The checksum field: octal digits, padded with spaces or NULs. */
function readChecksum(block: Buffer): number {
  let value = 0;
  let digits = 0;
  for (let index = 148; index < 156; index += 1) {
    const byte = block[index] as number;
    if (byte >= 0x30 && byte <= 0x37) {
      value = value * 8 + (byte - 0x30);
      digits += 1;
    } else if (digits > 0) break;
    else if (byte !== 0x20 && byte !== 0) return -1;
  }
  return digits > 0 ? value : -1;
}

function nulEnd(buffer: Buffer, start = 0, end = buffer.byteLength): number {
  const index = buffer.indexOf(0, start);
  return index === -1 || index > end ? end : index;
}

/** Octal (space or NUL terminated) or GNU base-256 (high bit of the first byte set). */
function readNumber(
  block: Buffer,
  offset: number,
  length: number,
  corrupt: (detail: string) => Error,
): number {
  const first = block[offset] as number;
  if (first & 0x80) {
    if (first === 0xff) throw corrupt("a negative number field");
    let value = first & 0x7f;
    for (let index = offset + 1; index < offset + length; index += 1)
      value = value * 256 + (block[index] as number);
    if (!Number.isSafeInteger(value)) throw corrupt("a number field out of range");
    return value;
  }
  let value = 0;
  let index = offset;
  const end = offset + length;
  while (index < end && block[index] === 0x20) index += 1;
  for (; index < end; index += 1) {
    const byte = block[index] as number;
    if (byte === 0 || byte === 0x20) break;
    if (byte < 0x30 || byte > 0x37) throw corrupt("a number field that is not octal");
    value = value * 8 + (byte - 0x30);
  }
  return value;
}

/** The name a header's ustar fields hold: `<prefix>/<name>` when there is a prefix. */
function ustarName(block: Buffer, ustar: boolean): string {
  const stored = nameText(block, 0, nulEnd(block, 0, 100));
  const prefix = ustar ? nameText(block, 345, nulEnd(block, 345, 500)) : "";
  return prefix ? `${prefix}/${stored}` : stored;
}

/**
 * A name, link target or pax record as text: bytes that are not UTF-8 would decode to U+FFFD, another name
 * than the one the archive holds, so they are refused (`invalid_name`, naming the entry as it decodes).
 */
function nameText(bytes: Buffer, start: number, end: number): string {
  const text = bytes.toString("utf8", start, end);
  // Plain ASCII is valid UTF-8: only a name holding U+FFFD or another non-ASCII character needs the check.
  if (/^[\x00-\x7f]*$/.test(text) || isUtf8Name(bytes.subarray(start, end))) return text;
  throw rejectEntry(text, "invalid_name", "the name is not valid UTF-8");
}

/** pax records `<length> <key>=<value>\n`. */
function parsePax(body: Buffer, corrupt: (detail: string) => Error): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < body.byteLength) {
    if (body[offset] === 0) break;
    const space = body.indexOf(0x20, offset);
    const length = space === -1 ? Number.NaN : Number(body.toString("latin1", offset, space));
    if (
      !Number.isSafeInteger(length) ||
      length <= 0 ||
      offset + length > body.byteLength ||
      body[offset + length - 1] !== 0x0a
    )
      throw corrupt("a malformed pax record");
    const record = body.toString("utf8", space + 1, offset + length - 1);
    const equals = record.indexOf("=");
    if (equals <= 0) throw corrupt("a malformed pax record");
    const key = record.slice(0, equals);
    // A name's bytes are checked (keys are ASCII, so the value starts `equals + 1` bytes into the record).
    records[key] =
      key === "path" || key === "linkpath"
        ? nameText(body, space + 2 + equals, offset + length - 1)
        : record.slice(equals + 1);
    offset += length;
  }
  return records;
}

function parsePaxNumber(value: string, corrupt: (detail: string) => Error): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw corrupt("a pax number that is not one");
  const parsed = Number(value);
  if (!Number.isSafeInteger(Math.floor(parsed))) throw corrupt("a pax number out of range");
  return parsed;
}
