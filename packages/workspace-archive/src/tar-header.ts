import { BLOCK, padToBlock } from "./tar-blocks.js";

/** What a member header holds (owners are numeric; names are member names such as `./a.txt`). */
export interface MemberHeader {
  readonly name: string;
  readonly type: "file" | "directory" | "symlink" | "link";
  readonly mode: number;
  /** Seconds since the epoch. */
  readonly mtime: number;
  /**
   * The exact time as `<seconds>.<nine digits>`, written as a pax `mtime` record (so the member always gets a
   * pax header) from which GNU tar sets the time to the nanosecond; `mtime` still fills the ustar field.
   */
  readonly exactMtime?: string;
  readonly size: number;
  readonly linkname: string | null;
  readonly uid: number;
  readonly gid: number;
  readonly uname: string;
  readonly gname: string;
}

const TYPEFLAG: Record<MemberHeader["type"], string> = {
  file: "0",
  link: "1",
  symlink: "2",
  directory: "5",
};
const MAX_OCTAL_11 = 0o77777777777;
const MAX_OCTAL_7 = 0o7777777;

/**
 * Encodes a member header as ustar, preceded by a pax extended header when the name or link target is
 * not plain ASCII or does not fit the ustar fields, or an exact mtime is given (the layout GNU tar and
 * tar-stream both read).
 * Synchronous, so packing costs no stream per member and split parts can be sized exactly in advance.
 * With `scratch` (a 512-byte buffer the caller copies from before the next call), a plain ustar header is
 * written there instead of into a new buffer: an archive of 200,000 members then allocates no header each.
 * Hand-written for that reason: tar-stream (which reads every archive here) packs only through its
 * stream API, one stream per entry, so it can neither size a part before writing it nor run inside the
 * reusable-buffer pack path that `pnpm bench:archive` measures against GNU tar.
 */
export function encodeMemberHeader(header: MemberHeader, scratch?: Buffer): Buffer {
  const ustarName = splitUstarName(header.name);
  if (ustarName !== null && !needsPax(header))
    return encodeUstar(
      header,
      ustarName.name,
      ustarName.prefix,
      header.linkname ?? "",
      TYPEFLAG[header.type],
      scratch,
    );
  // One buffer for the three parts (pax header, pax records, ustar header): a restore writes one per member.
  const records = paxRecords(header);
  const recordBytes = Buffer.byteLength(records, "utf8");
  // From Node's pool: a fresh zeroed buffer per member is slow when every member has a pax header.
  const out = Buffer.allocUnsafe(2 * BLOCK + padToBlock(recordBytes)).fill(0);
  encodeUstar(
    { ...header, type: "file", size: recordBytes, linkname: null },
    asciiTail(`PaxHeader/${header.name}`, 100),
    "",
    "",
    "x",
    out.subarray(0, BLOCK),
  );
  out.write(records, BLOCK, recordBytes, "utf8");
  const fallbackName = asciiTail(header.name, header.type === "directory" ? 99 : 100);
  const ustar = out.subarray(out.length - BLOCK);
  encodeUstar(header, fallbackName, "", asciiTail(header.linkname ?? "", 100), undefined, ustar);
  return out;
}

/** Byte length of {@link encodeMemberHeader}'s output, without encoding it. */
export function memberHeaderSize(header: PaxFields): number {
  if (splitUstarName(header.name) !== null && !needsPax(header)) return BLOCK;
  return 2 * BLOCK + padToBlock(Buffer.byteLength(paxRecords(header), "utf8"));
}

type PaxFields = Pick<MemberHeader, "name" | "linkname" | "exactMtime">;

/** Whether a member whose name fits ustar still needs a pax header: for its link target or exact mtime. */
function needsPax(header: PaxFields): boolean {
  if (header.exactMtime !== undefined) return true;
  return header.linkname !== null && !(isAscii(header.linkname) && header.linkname.length <= 100);
}

function paxRecords(header: PaxFields): string {
  return (
    paxRecord("path", header.name) +
    (header.exactMtime === undefined ? "" : paxRecord("mtime", header.exactMtime)) +
    (header.linkname === null ? "" : paxRecord("linkpath", header.linkname))
  );
}

function encodeUstar(
  header: MemberHeader,
  name: string,
  prefix: string,
  linkname: string,
  typeflag = TYPEFLAG[header.type],
  scratch?: Buffer,
): Buffer {
  const block = scratch ?? Buffer.alloc(BLOCK);
  if (scratch) block.fill(0);
  // Only what is written counts towards the checksum: the rest of the block is zeros.
  const named = block.write(name, 0, 100, "utf8");
  writeOctal(block, 100, 8, header.mode & 0o7777);
  writeOctal(block, 108, 8, header.uid <= MAX_OCTAL_7 ? header.uid : 0);
  writeOctal(block, 116, 8, header.gid <= MAX_OCTAL_7 ? header.gid : 0);
  writeSize(block, header.size);
  writeOctal(block, 136, 12, Math.min(Math.max(header.mtime, 0), MAX_OCTAL_11));
  block[156] = typeflag.charCodeAt(0);
  const linked = linkname ? block.write(linkname, 157, 100, "utf8") : 0;
  block.write("ustar\u000000", 257, 8, "latin1");
  if (header.uname) block.write(asciiTail(header.uname, 31), 265, 32, "latin1");
  if (header.gname) block.write(asciiTail(header.gname, 31), 297, 32, "latin1");
  const prefixed = prefix ? block.write(prefix, 345, 155, "utf8") : 0;
  block.fill(0x20, 148, 156);
  const checksum =
    sum(block, 0, named) +
    sum(block, 100, 157 + linked) +
    sum(block, 257, 329) +
    sum(block, 345, 345 + prefixed);
  writeOctal(block, 148, 7, checksum);
  block[155] = 0x20;
  return block;
}

function sum(block: Buffer, from: number, to: number): number {
  let total = 0;
  for (let index = from; index < to; index += 1) total += block[index] as number;
  return total;
}

/** Octal when it fits 11 digits (< 8 GiB), else the GNU base-256 form that GNU tar and tar-stream read. */
function writeSize(block: Buffer, size: number): void {
  if (size <= MAX_OCTAL_11) {
    writeOctal(block, 124, 12, size);
    return;
  }
  block[124] = 0x80;
  let remaining = size;
  for (let offset = 135; offset > 124; offset -= 1) {
    block[offset] = remaining % 256;
    remaining = Math.floor(remaining / 256);
  }
}

/** `value` as zero-padded octal in `length - 1` digits and a NUL, written byte by byte (no string per field). */
function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  let rest = Math.max(0, Math.floor(value));
  const digits = length - 1;
  for (let index = offset + digits - 1; index >= offset; index -= 1) {
    block[index] = 0x30 + (rest % 8);
    rest = Math.floor(rest / 8);
  }
  if (rest > 0) throw new RangeError(`value ${value} does not fit a ${length}-byte tar field`);
  block[offset + digits] = 0;
}

/** ustar name/prefix split, or null when the name needs a pax header. */
function splitUstarName(name: string): { name: string; prefix: string } | null {
  if (!isAscii(name)) return null;
  if (name.length <= 100) return { name, prefix: "" };
  for (let index = name.indexOf("/"); index !== -1; index = name.indexOf("/", index + 1)) {
    if (index <= 155 && name.length - index - 1 <= 100 && name.length - index - 1 > 0) {
      return { name: name.slice(index + 1), prefix: name.slice(0, index) };
    }
  }
  return null;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyBytes = Buffer.byteLength(body, "utf8");
  let length = bodyBytes + 1;
  while (String(length).length + bodyBytes !== length) length = String(length).length + bodyBytes;
  return `${length}${body}`;
}

function isAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/** The last `max` characters of the printable-ASCII form of `text` (a readable fallback next to pax). */
function asciiTail(text: string, max: number): string {
  const ascii = text.replace(/[^\x20-\x7e]/g, "_");
  return ascii.length <= max ? ascii : ascii.slice(ascii.length - max);
}
