/** Largest frame either side sends or accepts: a header and at most one data chunk. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** Largest data chunk of one `read` or `write` frame. */
export const MAX_CHUNK_BYTES = 1024 * 1024;

/** Entries one `list` answer holds at most. */
export const MAX_LIST_ENTRIES = 10_000;

/**
 * The file helper: a small Node program each container runs inside its own confinement (`node -e`), so
 * the kernel resolves every path of a file route in the container's root, symlinks and renames racing
 * included, with the container's own rights and bounds. It cannot import anything of this package (the
 * checkout is not visible inside), hence plain CommonJS in a string.
 *
 * Frames on stdin and stdout: u32 length of the rest, u32 request id, u32 header length, a JSON header,
 * then optional raw data. A request header is `{op, ...}`; an answer is `{ok: true, ...}` (with data for
 * `read`) or `{ok: false, code, message}` with the errno code. Requests run concurrently; files stay open
 * between `open*`, `read`/`write` and `close` as numbered handles. The helper exits when stdin ends.
 */
export const FILE_HELPER_SCRIPT = String.raw`"use strict"; // OMA_FILE_HELPER: the file routes' I/O inside this container
const fsp = require("node:fs/promises");
const { constants } = require("node:fs");
const { dirname, join } = require("node:path");
const MAX_FRAME = ${MAX_FRAME_BYTES};
const MAX_CHUNK = ${MAX_CHUNK_BYTES};
const MAX_ENTRIES = ${MAX_LIST_ENTRIES};
const MAX_HANDLES = 256;
// O_NONBLOCK: opening a FIFO planted in the tree must not hang the helper; it changes nothing for files.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK;
const handles = new Map();
let nextHandle = 1;
const fail = (code, message) => Object.assign(new Error(message), { code });
const kind = (s) => (s.isSymbolicLink() ? "symlink" : s.isDirectory() ? "directory" : s.isFile() ? "file" : "other");
const info = (s) => ({ type: kind(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode });
const held = (id) => {
  const handle = handles.get(id);
  if (handle === undefined) throw fail("EBADF", "no open handle " + id);
  return handle;
};
const keep = async (handle) => {
  if (handles.size >= MAX_HANDLES) {
    await handle.close();
    throw fail("EMFILE", "too many open handles");
  }
  const id = nextHandle++;
  handles.set(id, handle);
  return id;
};
const ops = {
  async stat(r) {
    return [info(r.follow ? await fsp.stat(r.path) : await fsp.lstat(r.path))];
  },
  async mkdir(r) {
    await fsp.mkdir(r.path, { recursive: r.recursive === true });
    return [{}];
  },
  async delete(r) {
    await fsp.lstat(r.path);
    // A link to a directory counts as one, as the published server's test -d says.
    if ((await fsp.stat(r.path).catch(() => undefined))?.isDirectory()) throw fail("EISDIR", "is a directory");
    await fsp.unlink(r.path);
    return [{}];
  },
  async move(r) {
    await fsp.lstat(r.from);
    await fsp.mkdir(dirname(r.to), { recursive: true });
    try {
      await fsp.rename(r.from, r.to);
    } catch (error) {
      // Each of /workspace, /tmp and the outputs is its own mount: across them a move copies, as mv does.
      if (error.code !== "EXDEV") throw error;
      await fsp.cp(r.from, r.to, { recursive: true, force: true, errorOnExist: false, verbatimSymlinks: true, preserveTimestamps: true });
      await fsp.rm(r.from, { recursive: true, force: true });
    }
    return [{}];
  },
  async list(r) {
    if (!(await fsp.stat(r.path)).isDirectory()) throw fail("ENOTDIR", "not a directory");
    const entries = [];
    let bytes = 0;
    const walk = async (directory, relative) => {
      // Directory order, each directory followed by its entries: the order of the find the published server runs.
      for await (const dirent of await fsp.opendir(directory)) {
        const name = dirent.name;
        if (entries.length >= MAX_ENTRIES) return;
        if (r.includeHidden !== true && name.startsWith(".")) continue;
        let s;
        try {
          s = await fsp.lstat(join(directory, name));
        } catch {
          continue;
        }
        const relativePath = relative === "" ? name : relative + "/" + name;
        bytes += Buffer.byteLength(relativePath) + 96;
        if (bytes > MAX_FRAME / 2) throw fail("E2BIG", "the listing is too large for one answer");
        entries.push({ relativePath, ...info(s) });
        if (r.recursive === true && s.isDirectory()) await walk(join(directory, name), relativePath);
      }
    };
    await walk(r.path, "");
    return [{ entries }];
  },
  async openRead(r) {
    const handle = await fsp.open(r.path, READ_FLAGS);
    try {
      return [{ handle: await keep(handle), ...info(await handle.stat()) }];
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  },
  async openWrite(r) {
    await fsp.mkdir(dirname(r.path), { recursive: true });
    const handle = await fsp.open(r.path, WRITE_FLAGS, 0o666);
    try {
      if (!(await handle.stat()).isFile()) throw fail("EINVAL", "not a regular file");
      return [{ handle: await keep(handle) }];
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  },
  async read(r) {
    const buffer = Buffer.alloc(Math.max(0, Math.min(Number(r.length) || 0, MAX_CHUNK)));
    const { bytesRead } = await held(r.handle).read(buffer, 0, buffer.length, null);
    return [{ bytesRead }, buffer.subarray(0, bytesRead)];
  },
  async truncate(r) {
    if (!Number.isSafeInteger(r.size) || r.size < 0) throw fail("EINVAL", "invalid size");
    await held(r.handle).truncate(r.size);
    return [{}];
  },
  async write(r, data) {
    const handle = held(r.handle);
    for (let offset = 0; offset < data.length; ) offset += (await handle.write(data, offset)).bytesWritten;
    return [{}];
  },
  async close(r) {
    const handle = held(r.handle);
    handles.delete(r.handle);
    await handle.close();
    return [{}];
  },
};
const send = (id, header, data) => {
  const head = Buffer.from(JSON.stringify(header), "utf8");
  const body = data === undefined ? Buffer.alloc(0) : data;
  const prefix = Buffer.alloc(12);
  prefix.writeUInt32BE(8 + head.length + body.length, 0);
  prefix.writeUInt32BE(id, 4);
  prefix.writeUInt32BE(head.length, 8);
  process.stdout.write(Buffer.concat([prefix, head, body]));
};
const run = async (id, header, data) => {
  try {
    if (typeof header.op !== "string" || !Object.prototype.hasOwnProperty.call(ops, header.op)) throw fail("EINVAL", "unknown operation");
    const [result, bytes] = await ops[header.op](header, data);
    send(id, { ok: true, ...result }, bytes);
  } catch (error) {
    const code = error !== null && typeof error === "object" && typeof error.code === "string" ? error.code : "EIO";
    send(id, { ok: false, code, message: String(error && error.message).slice(0, 2048) });
  }
};
// Chunks are joined only once a whole frame is there, so a large frame costs one copy.
const parts = [];
let total = 0;
let needed = 4;
process.stdin.on("data", (chunk) => {
  parts.push(chunk);
  total += chunk.length;
  while (total >= needed) {
    const joined = parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
    parts.length = 0;
    const length = joined.readUInt32BE(0);
    if (length < 8 || length > MAX_FRAME) process.exit(2);
    if (joined.length < 4 + length) {
      parts.push(joined);
      needed = 4 + length;
      break;
    }
    const frame = joined.subarray(4, 4 + length);
    const rest = joined.subarray(4 + length);
    if (rest.length > 0) parts.push(rest);
    total = rest.length;
    needed = 4;
    const headerLength = frame.readUInt32BE(4);
    let header;
    try {
      header = JSON.parse(frame.subarray(8, 8 + headerLength).toString("utf8"));
    } catch {
      process.exit(2);
    }
    void run(frame.readUInt32BE(0), header, frame.subarray(8 + headerLength));
  }
});
process.stdin.on("end", () => process.exit(0));
`;
