import { lstat, readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import { entryType, modeString } from "./file-info.js";
import { fileSystemError, resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import { listFilesRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError, now, sendJson } from "./wire.js";

/** Entries one listing returns at most; a recursive listing of a huge tree stops there. */
const MAX_ENTRIES = 10_000;

interface ListEntry {
  name: string;
  absolutePath: string;
  relativePath: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modifiedAt: string;
  mode: string;
  permissions: { readable: boolean; writable: boolean; executable: boolean };
}

/** `POST /api/list-files`: entries of a directory, optionally recursive and with hidden names. */
export async function handleListFiles(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, listFilesRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const info = await lstat(target.host).catch((error: unknown) => {
    throw fileSystemError(error, target.path, "file.list");
  });
  if (!info.isDirectory()) {
    throw new ControlApiError("NOT_DIRECTORY", 400, `Path is not a directory: ${target.path}`, { path: target.path, operation: "file.list" }, { operation: "file.list" });
  }
  const files: ListEntry[] = [];
  const recursive = body.options?.recursive ?? false;
  const includeHidden = body.options?.includeHidden ?? false;
  const walk = async (hostDir: string, relativeDir: string): Promise<void> => {
    const names = (await readdir(hostDir)).sort();
    for (const name of names) {
      if (files.length >= MAX_ENTRIES) return;
      if (!includeHidden && name.startsWith(".")) continue;
      const hostEntry = join(hostDir, name);
      const stats = await lstat(hostEntry).catch(() => undefined);
      if (stats === undefined) continue;
      const relativePath = relativeDir === "" ? name : `${relativeDir}/${name}`;
      const type = entryType(stats);
      files.push({
        name,
        absolutePath: posix.join(target.path, relativePath),
        relativePath,
        type,
        size: stats.size,
        modifiedAt: stats.mtime.toISOString(),
        mode: modeString(stats.mode),
        permissions: { readable: (stats.mode & 0o400) !== 0, writable: (stats.mode & 0o200) !== 0, executable: (stats.mode & 0o100) !== 0 },
      });
      if (recursive && type === "directory") await walk(hostEntry, relativePath);
    }
  };
  await walk(target.host, "");
  sendJson(context.response, 200, { success: true, path: target.path, files, count: files.length, timestamp: now() });
}
