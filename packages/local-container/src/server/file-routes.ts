import { classifyContent } from "./file-info.js";
import {
  deleteFile,
  makeDirectory,
  moveEntry as moveInContainer,
  pathExists,
  readWholeFile,
  writeWholeFile,
} from "./file-ops.js";
import { fileSystemError, resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import {
  mkdirRequestSchema,
  moveRequestSchema,
  pathRequestSchema,
  readRequestSchema,
  renameRequestSchema,
  writeRequestSchema,
} from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError } from "./control-api-error.js";
import { now, sendJson } from "./control-api-responses.js";

/** `POST /api/read`: the whole file as UTF-8 text or base64, up to `maxOutputBytes`. */
export async function handleRead(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, readRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const { stat, content } = await readWholeFile(
    context.container.files,
    target.target,
    context.limits.maxOutputBytes,
  ).catch((error: unknown) => {
    throw fileSystemError(error, target.path, "file.read");
  });
  if (content === undefined) {
    throw new ControlApiError(
      "FILE_TOO_LARGE",
      413,
      `File is ${stat.size} bytes; /api/read returns at most ${context.limits.maxOutputBytes}. Use /api/read/stream`,
      {
        path: target.path,
        size: stat.size,
        maxOutputBytes: context.limits.maxOutputBytes,
      },
      { operation: "file.read" },
    );
  }
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
  const content =
    body.encoding === "base64"
      ? Buffer.from(body.content, "base64")
      : Buffer.from(body.content, "utf8");
  try {
    await writeWholeFile(context.container.files, target.target, content, {
      fillDelayMs: context.fileWriteFillDelayMs,
    });
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
    await makeDirectory(context.container.files, target.target, recursive);
  } catch (error) {
    if (ControlApiError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "EEXIST"
        ? "File exists"
        : code === "ENOENT"
          ? "No such file or directory"
          : code === "ENOTDIR"
            ? "Not a directory"
            : "Permission denied";
    throw new ControlApiError("FILESYSTEM_ERROR", 500, "mkdir operation failed with exit code 1", {
      path: target.path,
      options: { recursive },
      exitCode: 1,
      stderr: `mkdir: cannot create directory '${target.path}': ${reason}`,
    });
  }
  sendJson(context.response, 200, {
    success: true,
    path: target.path,
    recursive,
    timestamp: now(),
  });
}

/** `POST /api/exists`. */
export async function handleExists(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const exists = await pathExists(context.container.files, target.target);
  sendJson(context.response, 200, { success: true, path: target.path, exists, timestamp: now() });
}

/** `POST /api/delete`: removes a file; a directory → 400 `IS_DIRECTORY` worded as the published server words it, a missing path → 404. */
export async function handleDelete(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  try {
    await deleteFile(context.container.files, target.target);
  } catch (error) {
    if ((error as { code?: unknown }).code === "EISDIR") {
      throw new ControlApiError(
        "IS_DIRECTORY",
        400,
        `Cannot delete directory with deleteFile() at '${target.path}'. Use exec('rm -rf <path>') instead.`,
        {
          path: target.path,
          operation: "file.delete",
        },
        { operation: "file.delete" },
      );
    }
    throw fileSystemError(error, target.path, "file.delete");
  }
  sendJson(context.response, 200, { success: true, path: target.path, timestamp: now() });
}

async function moveEntry(
  context: RouteContext,
  from: string,
  to: string,
  sessionId: string | undefined,
  operation: string,
): Promise<{ path: string; newPath: string }> {
  const source = resolveFilePath(context.container, from, sessionId);
  const destination = resolveFilePath(context.container, to, sessionId);
  try {
    await moveInContainer(context.container.files, source.target, destination.target);
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
  const moved = await moveEntry(
    context,
    body.sourcePath,
    body.destinationPath,
    body.sessionId,
    "file.move",
  );
  sendJson(context.response, 200, { success: true, ...moved, timestamp: now() });
}
