/** One tar member as a restore writes it. */
export interface TarMemberHeader {
  readonly path: string;
  readonly type: "file" | "dir" | "symlink" | "link";
  readonly mode: number;
  /** `<seconds>.<nine digits>`, carried exactly in a pax header. */
  readonly mtime: string;
  readonly size: number;
  readonly linkname?: string;
}

const BLOCK = 512;
const TYPEFLAG = { file: "0", link: "1", symlink: "2", dir: "5" } as const;

function octal(block: Buffer, at: number, width: number, value: number) {
  block.write(`${value.toString(8).padStart(width - 1, "0")}\0`, at, width, "ascii");
}

function ustar(
  name: string,
  typeflag: string,
  mode: number,
  size: number,
  mtime: number,
  linkname: string,
): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  octal(block, 100, 8, mode);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, size);
  octal(block, 136, 12, Math.max(0, mtime));
  block.fill(" ", 148, 156);
  block.write(typeflag, 156, 1, "ascii");
  block.write(linkname, 157, 100, "utf8");
  block.write("ustar\0" + "00", 257, 8, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return block;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/**
 * A member's headers: always a pax header carrying the exact path, link target, mtime and size (so no field's
 * width or precision matters), then a ustar header GNU tar reads with it. The body and its padding follow.
 */
export function encodeHeader(member: TarMemberHeader): Buffer {
  const name = member.type === "dir" ? `./${member.path}/` : `./${member.path}`;
  const records =
    paxRecord("path", name) +
    paxRecord("mtime", member.mtime) +
    paxRecord("size", String(member.size)) +
    (member.linkname === undefined ? "" : paxRecord("linkpath", member.linkname));
  const pax = Buffer.from(records, "utf8");
  const seconds = Number.parseInt(member.mtime, 10);
  return Buffer.concat([
    ustar("././@PaxHeader", "x", 0o644, pax.length, seconds, ""),
    pax,
    padding(pax.length),
    ustar(
      "placeholder",
      TYPEFLAG[member.type],
      member.mode,
      member.type === "file" ? Math.min(member.size, 0o77777777777) : 0,
      seconds,
      "",
    ),
  ]);
}

/** The zeros after a member's body of `size` bytes. */
export const bodyPadding = padding;

/** The end of an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);
