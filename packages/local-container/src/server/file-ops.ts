import * as z from "zod";
import type { FileHelper } from "./file-helper.js";
import { FileOperationError } from "./file-helper.js";
import { MAX_CHUNK_BYTES } from "./file-helper-protocol.js";

const entryTypeSchema = z.enum(["file", "directory", "symlink", "other"]);
const statSchema = z.object({
  type: entryTypeSchema,
  size: z.number().nonnegative(),
  mtimeMs: z.number(),
  mode: z.number().int().nonnegative(),
});
const openedSchema = statSchema.extend({ handle: z.number().int().positive() });
const handleSchema = z.object({ handle: z.number().int().positive() });
const readSchema = z.object({ bytesRead: z.number().int().nonnegative() });
const listSchema = z.object({
  entries: z.array(statSchema.extend({ relativePath: z.string().min(1) })),
});

/** A file's kind, size, modification time and mode, as `lstat`/`stat` inside the container saw them. */
export type FileStat = z.infer<typeof statSchema>;

/** One entry of {@link listDirectory}: its path relative to the listed directory and its `lstat`. */
export type ListedEntry = z.infer<typeof listSchema>["entries"][number];

/** A file open for reading inside the container; reads continue where the last one ended. */
export interface OpenFile {
  /** What `fstat` on the open file said: the file read is the one described, whatever was renamed since. */
  readonly stat: FileStat;
  /** Up to `length` bytes (at most 1 MiB); an empty buffer at the end of the file. */
  read(length: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** `stat` (or `lstat` with `follow: false`) of `path`. */
export async function statPath(
  files: FileHelper,
  path: string,
  follow: boolean,
): Promise<FileStat> {
  return statSchema.parse((await files.request({ op: "stat", path, follow })).header);
}

/** Whether `path` exists (without following a final symlink). */
export async function pathExists(files: FileHelper, path: string): Promise<boolean> {
  try {
    await statPath(files, path, false);
    return true;
  } catch (error) {
    if (FileOperationError.isInstance(error)) return false;
    throw error;
  }
}

/** Opens `path` for reading (following symlinks, never blocking on a FIFO). */
export async function openForRead(files: FileHelper, path: string): Promise<OpenFile> {
  const opened = openedSchema.parse((await files.request({ op: "openRead", path })).header);
  const { handle, ...stat } = opened;
  let closed = false;
  return {
    stat,
    async read(length) {
      const reply = await files.request({
        op: "read",
        handle,
        length: Math.min(length, MAX_CHUNK_BYTES),
      });
      const { bytesRead } = readSchema.parse(reply.header);
      if (bytesRead !== reply.data.length || bytesRead > length)
        throw new FileOperationError(
          "EIO",
          "the file helper's read answer does not match its length",
        );
      return reply.data;
    },
    async close() {
      if (closed) return;
      closed = true;
      await files.request({ op: "close", handle });
    },
  };
}

/** Reads a whole regular file of at most `maxBytes`; `undefined` when it is larger. Throws `EISDIR` for a directory, `EINVAL` for another non-file. */
export async function readWholeFile(
  files: FileHelper,
  path: string,
  maxBytes: number,
): Promise<{ stat: FileStat; content: Buffer | undefined }> {
  const file = await openForRead(files, path);
  try {
    if (file.stat.type === "directory") throw new FileOperationError("EISDIR", "is a directory");
    if (file.stat.type !== "file") throw new FileOperationError("EINVAL", "not a regular file");
    if (file.stat.size > maxBytes) return { stat: file.stat, content: undefined };
    const pieces: Buffer[] = [];
    let total = 0;
    for (;;) {
      const piece = await file.read(MAX_CHUNK_BYTES);
      if (piece.length === 0) break;
      total += piece.length;
      // The file grew after it was opened: still bounded.
      if (total > maxBytes) return { stat: { ...file.stat, size: total }, content: undefined };
      pieces.push(piece);
    }
    return { stat: file.stat, content: Buffer.concat(pieces, total) };
  } finally {
    await file.close();
  }
}

/**
 * Creates or truncates `path` (creating parents) and writes `content` in chunks the helper bounds. As
 * Cloudflare's container server does (it writes with `Bun.write`), the file is made full-length first and
 * filled afterwards, `fillDelayMs` later: a reader that takes "has its size" for "is complete" reads zeros
 * here as it does there.
 */
export async function writeWholeFile(
  files: FileHelper,
  path: string,
  content: Uint8Array,
  options: { readonly fillDelayMs?: number } = {},
): Promise<void> {
  const { handle } = handleSchema.parse((await files.request({ op: "openWrite", path })).header);
  try {
    if (content.length > 0) {
      await files.request({ op: "truncate", handle, size: content.length });
      if ((options.fillDelayMs ?? 0) > 0)
        await new Promise((resolve) => setTimeout(resolve, options.fillDelayMs));
    }
    for (let offset = 0; offset < content.length; offset += MAX_CHUNK_BYTES) {
      await files.request(
        { op: "write", handle },
        content.subarray(offset, offset + MAX_CHUNK_BYTES),
      );
    }
  } finally {
    await files.request({ op: "close", handle });
  }
}

/** `mkdir`, optionally recursive. */
export async function makeDirectory(
  files: FileHelper,
  path: string,
  recursive: boolean,
): Promise<void> {
  await files.request({ op: "mkdir", path, recursive });
}

/** Removes a file or symlink; a directory, or a symlink to one → `EISDIR`. */
export async function deleteFile(files: FileHelper, path: string): Promise<void> {
  await files.request({ op: "delete", path });
}

/** Renames `from` to `to`, creating the parents of `to`; a missing `from` → `ENOENT`. */
export async function moveEntry(files: FileHelper, from: string, to: string): Promise<void> {
  await files.request({ op: "move", from, to });
}

/** Entries of a directory in directory order, each directory followed by its entries; optionally recursive and with dot names. */
export async function listDirectory(
  files: FileHelper,
  path: string,
  options: { recursive: boolean; includeHidden: boolean },
): Promise<ListedEntry[]> {
  return listSchema.parse((await files.request({ op: "list", path, ...options })).header).entries;
}
