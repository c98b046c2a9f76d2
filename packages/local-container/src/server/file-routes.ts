import { lstat, mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { classifyContent } from "./file-info.js";
import { fileSystemError, resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import {
  mkdirRequestSchema, moveRequestSchema, pathRequestSchema, readRequestSchema, renameRequestSchema, writeRequestSchema,
} from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError, fileNotFound, now, sendJson } from "./wire.js";

/** `POST /api/read`: the whole file as UTF-8 text or base64, up to `maxOutputBytes`. */
export async function handleRead(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, readRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const info = await stat(target.host).catch((error: unknown) => {
    throw fileSystemError(error, target.path, "file.read");
  });
  if (info.isDirectory()) throw fileSystemError(Object.assign(new Error("is a directory"), { code: "EISDIR" }), target.path, "file.read");
  if (info.size > context.limits.maxOutputBytes) {
    throw new ControlApiError("FILE_TOO_LARGE", 413, `File is ${info.size} bytes; /api/read returns at most ${context.limits.maxOutputBytes}. Use /api/read/stream`, {
      path: target.path, size: info.size, maxOutputBytes: context.limits.maxOutputBytes,
    }, { operation: "file.read" });
  }
  const content = await readFile(target.host).catch((error: unknown) => {
    throw fileSystemError(error, target.path, "file.read");
  });
  const kind = classifyContent(target.path, content);
  const asBase64 = kind.isBinary || body.encoding === "base64";
  sendJson(context.response, 200, {
    success: true,
    path: target.path,
    content: asBase64 ? content.toString("base64") : content.toString("utf8"),
    timestamp: now(),
    encoding: asBase64 ? "base64" : "utf-8",
    isBinary: kind.isBinary,
    mimeType: kind.mimeType,
    size: content.length,
  });
}

/** `POST /api/write`: writes UTF-8 text or base64 content, creating parent directories. */
export async function handleWrite(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, writeRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const content = body.encoding === "base64" ? Buffer.from(body.content, "base64") : Buffer.from(body.content, "utf8");
  try {
    await mkdir(dirname(target.host), { recursive: true });
    await writeFile(target.host, content);
  } catch (error) {
    throw fileSystemError(error, target.path, "file.write");
  }
  sendJson(context.response, 200, { success: true, path: target.path, timestamp: now() });
}

/** `POST /api/mkdir`: failures look like the `mkdir` command's, as on the published server. */
export async function handleMkdir(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, mkdirRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const recursive = body.recursive ?? false;
  try {
    await mkdir(target.host, { recursive });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "EEXIST" ? "File exists" : code === "ENOENT" ? "No such file or directory" : code === "ENOTDIR" ? "Not a directory" : "Permission denied";
    throw new ControlApiError("FILESYSTEM_ERROR", 500, "mkdir operation failed with exit code 1", {
      path: target.path, options: { recursive }, exitCode: 1, stderr: `mkdir: cannot create directory '${target.path}': ${reason}`,
    });
  }
  sendJson(context.response, 200, { success: true, path: target.path, recursive, timestamp: now() });
}

/** `POST /api/exists`. */
export async function handleExists(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId, false);
  const exists = await lstat(target.host).then(() => true, () => false);
  sendJson(context.response, 200, { success: true, path: target.path, exists, timestamp: now() });
}

/** `POST /api/delete`: removes a file; a directory → 400 `IS_DIRECTORY`, a missing path → 404. */
export async function handleDelete(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId, false);
  const info = await lstat(target.host).catch(() => undefined);
  if (info === undefined) throw fileNotFound(target.path, "file.delete");
  try {
    if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    await unlink(target.host);
  } catch (error) {
    throw fileSystemError(error, target.path, "file.delete");
  }
  sendJson(context.response, 200, { success: true, path: target.path, timestamp: now() });
}

async function moveEntry(context: RouteContext, from: string, to: string, sessionId: string | undefined, operation: string): Promise<{ path: string; newPath: string }> {
  const source = resolveFilePath(context.container, from, sessionId, false);
  const destination = resolveFilePath(context.container, to, sessionId, false);
  if (!(await lstat(source.host).then(() => true, () => false))) throw fileNotFound(source.path, operation);
  try {
    await mkdir(dirname(destination.host), { recursive: true });
    await rename(source.host, destination.host);
  } catch (error) {
    throw fileSystemError(error, source.path, operation);
  }
  return { path: source.path, newPath: destination.path };
}

/** `POST /api/rename`. */
export async function handleRename(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, renameRequestSchema, context.limits.maxBodyBytes);
  const moved = await moveEntry(context, body.oldPath, body.newPath, body.sessionId, "file.rename");
  sendJson(context.response, 200, { success: true, ...moved, timestamp: now() });
}

/** `POST /api/move`. */
export async function handleMove(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, moveRequestSchema, context.limits.maxBodyBytes);
  const moved = await moveEntry(context, body.sourcePath, body.destinationPath, body.sessionId, "file.move");
  sendJson(context.response, 200, { success: true, ...moved, timestamp: now() });
}
