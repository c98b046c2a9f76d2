import { invalidName } from "./refusals.js";

/** One entry as the sandbox listed it (see capture.sh). */
export interface ListedEntry {
  readonly type: string;
  readonly mode: number;
  readonly size: number;
  readonly blocks: number;
  /** `<seconds>.<nine digits>`. */
  readonly mtime: string;
  readonly inode: string;
  readonly links: number;
  readonly target: string;
}

/** What changed at one path since the cache's listing: its new entry (with a file's hash), or its removal. */
export interface Change {
  readonly path: string;
  readonly entry: ListedEntry | null;
  readonly hash: string | null;
  readonly removed: boolean;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** `%T@` (`<s>.<ten digits>`) as the nine digits a tree keeps. */
function mtimeOf(text: string): string {
  const [seconds = "", fraction = ""] = text.split(".");
  return `${seconds}.${fraction.padEnd(9, "0").slice(0, 9)}`;
}

/** Nine space-terminated fields, then a symlink's target (which may hold spaces). */
function parseEntry(path: string, text: string): ListedEntry {
  const fields = text.split(" ");
  if (fields.length < 10) throw invalidName(path, "the sandbox's listing of it is malformed");
  const [type = "", mode = "", size = "", blocks = "", mtime = "", , inode = "", links = ""] =
    fields;
  return {
    type,
    mode: Number.parseInt(mode, 8),
    size: Number(size),
    blocks: Number(blocks),
    mtime: mtimeOf(mtime),
    inode,
    links: Number(links),
    target: fields.slice(9).join(" "),
  };
}

/** The records of `source` (NUL-terminated, sorted) grouped by path, in order. */
export async function* readChanges(source: AsyncIterable<Uint8Array>): AsyncGenerator<Change> {
  let pending: Buffer = Buffer.alloc(0);
  let current: { -readonly [Field in keyof Change]: Change[Field] } | null = null;
  // A plain function, not a generator: a generator per record is slow over a million records.
  /** Takes one record in; returns the change of the path before it once that path's records are all in. */
  const record = (bytes: Buffer): Change | null => {
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      const separator = bytes.indexOf("//");
      const rawPath = separator < 0 ? bytes : bytes.subarray(0, separator);
      throw invalidName(
        rawPath.toString("latin1"),
        "its name is not UTF-8, which a snapshot's trees hold",
      );
    }
    const at = text.indexOf("//");
    if (at <= 0) throw invalidName(text, "the sandbox's listing of it is malformed");
    const path = text.slice(0, at);
    const kind = text[at + 2];
    const rest = text.slice(at + 3);
    const done = current && current.path !== path ? current : null;
    if (done) current = null;
    current ??= { path, entry: null, hash: null, removed: false };
    if (kind === "e") current.entry = parseEntry(path, rest);
    else if (kind === "h") current.hash = rest;
    else if (kind === "r") current.removed = true;
    else throw invalidName(path, "the sandbox's listing of it is malformed");
    return done;
  };
  // Records are read from views of each chunk (every record is decoded before the next chunk is asked for);
  // only a record split across chunks is copied.
  for await (const piece of source) {
    const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    let start = 0;
    if (pending.length > 0) {
      const end = chunk.indexOf(0);
      if (end < 0) {
        pending = Buffer.concat([pending, chunk]);
        continue;
      }
      const joined = Buffer.concat([pending, chunk.subarray(0, end)]);
      pending = Buffer.alloc(0);
      const done = record(joined);
      if (done) yield done;
      start = end + 1;
    }
    for (let end = chunk.indexOf(0, start); end >= 0; end = chunk.indexOf(0, start)) {
      const done = record(chunk.subarray(start, end));
      if (done) yield done;
      start = end + 1;
    }
    if (start < chunk.length) pending = Buffer.from(chunk.subarray(start));
  }
  if (pending.length > 0)
    throw invalidName(pending.toString("latin1").slice(0, 256), "the listing ends mid-record");
  if (current) yield current;
}
