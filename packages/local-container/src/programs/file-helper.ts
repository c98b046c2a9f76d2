/**
 * The file helper: a small Node program each container runs inside its own confinement (`node -e`), so
 * the kernel resolves every path of a file route in the container's root, symlinks and renames racing
 * included, with the container's own rights and bounds. The checkout is not visible inside, so the build
 * bundles it into one CommonJS program (the root scripts/program-text.mjs) that the server holds as text; the
 * protocol is in `server/file-helper-protocol.ts`.
 */
/*! OMA_FILE_HELPER: the file routes' I/O inside this container (how its process is found there) */
import { constants, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  MAX_CHUNK_BYTES,
  MAX_FRAME_BYTES,
  MAX_LIST_ENTRIES,
  createFrameReader,
  encodeFrame,
} from "../server/file-helper-protocol.js";

const MAX_HANDLES = 256;
// O_NONBLOCK: opening a FIFO planted in the tree must not hang the helper; it changes nothing for files.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK;

/**
 * A request header as the server sends it. Nothing is trusted: a field of the wrong type fails in the
 * file system call it reaches, and the answer carries that call's error code.
 */
interface Request {
  readonly op: string;
  readonly path: string;
  readonly follow?: boolean;
  readonly recursive?: boolean;
  readonly includeHidden?: boolean;
  readonly from: string;
  readonly to: string;
  readonly handle: number;
  readonly length?: unknown;
  readonly size: number;
}

/** An answer's header fields and its data, if any. */
type Answer = readonly [header: Record<string, unknown>, data?: Buffer];

interface Entry {
  readonly relativePath: string;
  readonly type: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly mode: number;
}

const handles = new Map<number, fsp.FileHandle>();
let nextHandle = 1;

const fail = (code: string, message: string): Error => Object.assign(new Error(message), { code });
const kind = (s: Stats): string =>
  s.isSymbolicLink() ? "symlink" : s.isDirectory() ? "directory" : s.isFile() ? "file" : "other";
const info = (s: Stats) => ({ type: kind(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode });

function held(id: number): fsp.FileHandle {
  const handle = handles.get(id);
  if (handle === undefined) throw fail("EBADF", `no open handle ${id}`);
  return handle;
}

async function keep(handle: fsp.FileHandle): Promise<number> {
  if (handles.size >= MAX_HANDLES) {
    await handle.close();
    throw fail("EMFILE", "too many open handles");
  }
  const id = nextHandle++;
  handles.set(id, handle);
  return id;
}

/** Closes `handle` when `use` fails, so a refused open leaves nothing open. */
async function closingOnFailure(
  handle: fsp.FileHandle,
  use: () => Promise<Answer>,
): Promise<Answer> {
  try {
    return await use();
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

async function list(r: Request): Promise<Answer> {
  if (!(await fsp.stat(r.path)).isDirectory()) throw fail("ENOTDIR", "not a directory");
  const entries: Entry[] = [];
  let bytes = 0;
  const walk = async (directory: string, relative: string): Promise<void> => {
    // Directory order, each directory followed by its entries: the order of the find the published server runs.
    for await (const dirent of await fsp.opendir(directory)) {
      const name = dirent.name;
      if (entries.length >= MAX_LIST_ENTRIES) return;
      if (r.includeHidden !== true && name.startsWith(".")) continue;
      let s: Stats;
      try {
        s = await fsp.lstat(join(directory, name));
      } catch {
        continue;
      }
      const relativePath = relative === "" ? name : `${relative}/${name}`;
      bytes += Buffer.byteLength(relativePath) + 96;
      if (bytes > MAX_FRAME_BYTES / 2)
        throw fail("E2BIG", "the listing is too large for one answer");
      entries.push({ relativePath, ...info(s) });
      if (r.recursive === true && s.isDirectory()) await walk(join(directory, name), relativePath);
    }
  };
  await walk(r.path, "");
  return [{ entries }];
}

const ops: Readonly<Record<string, (r: Request, data: Buffer) => Promise<Answer>>> = {
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
    if ((await fsp.stat(r.path).catch(() => undefined))?.isDirectory())
      throw fail("EISDIR", "is a directory");
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
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      await fsp.cp(r.from, r.to, {
        recursive: true,
        force: true,
        errorOnExist: false,
        verbatimSymlinks: true,
        preserveTimestamps: true,
      });
      await fsp.rm(r.from, { recursive: true, force: true });
    }
    return [{}];
  },
  list,
  async openRead(r) {
    const handle = await fsp.open(r.path, READ_FLAGS);
    return closingOnFailure(handle, async () => [
      { handle: await keep(handle), ...info(await handle.stat()) },
    ]);
  },
  async openWrite(r) {
    await fsp.mkdir(dirname(r.path), { recursive: true });
    const handle = await fsp.open(r.path, WRITE_FLAGS, 0o666);
    return closingOnFailure(handle, async () => {
      if (!(await handle.stat()).isFile()) throw fail("EINVAL", "not a regular file");
      return [{ handle: await keep(handle) }];
    });
  },
  async read(r) {
    const buffer = Buffer.alloc(Math.max(0, Math.min(Number(r.length) || 0, MAX_CHUNK_BYTES)));
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
    for (let offset = 0; offset < data.length; )
      offset += (await handle.write(data, offset)).bytesWritten;
    return [{}];
  },
  async close(r) {
    const handle = held(r.handle);
    handles.delete(r.handle);
    await handle.close();
    return [{}];
  },
};

const send = (id: number, header: Record<string, unknown>, data?: Buffer): void => {
  process.stdout.write(encodeFrame(id, header, data));
};

async function run(id: number, header: Request, data: Buffer): Promise<void> {
  try {
    const op =
      typeof header.op === "string" && Object.hasOwn(ops, header.op) ? ops[header.op] : undefined;
    if (op === undefined) throw fail("EINVAL", "unknown operation");
    const [result, bytes] = await op(header, data);
    send(id, { ok: true, ...result }, bytes);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const message = String((error as { message?: unknown } | null)?.message).slice(0, 2048);
    send(id, { ok: false, code: typeof code === "string" ? code : "EIO", message });
  }
}

const onFrame = (frame: Buffer): void => {
  const headerLength = frame.readUInt32BE(4);
  let header: Request;
  try {
    header = JSON.parse(frame.subarray(8, 8 + headerLength).toString("utf8")) as Request;
  } catch {
    process.exit(2);
  }
  void run(frame.readUInt32BE(0), header, frame.subarray(8 + headerLength));
};
process.stdin.on(
  "data",
  createFrameReader(onFrame, () => process.exit(2)),
);
process.stdin.on("end", () => process.exit(0));
