import { posix } from "node:path";
import { modeString } from "./file-info.js";
import { listDirectory } from "./file-ops.js";
import { fileSystemError, resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import { listFilesRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { ControlApiError } from "./control-api-error.js";
import { now, sendJson } from "./control-api-responses.js";

/**
 * `POST /api/list-files`: entries of a directory, optionally recursive and with hidden names. The
 * container's file helper walks the tree (at most 10 000 entries), so what it lists is what a process in
 * the container would see.
 */
export async function handleListFiles(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, listFilesRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const options = {
    recursive: body.options?.recursive ?? false,
    includeHidden: body.options?.includeHidden ?? false,
  };
  const entries = await listDirectory(context.container.files, target.target, options).catch(
    (error: unknown) => {
      if ((error as { code?: unknown }).code === "ENOTDIR") {
        throw new ControlApiError(
          "NOT_DIRECTORY",
          400,
          `Path is not a directory: ${target.path}`,
          { path: target.path, operation: "file.list" },
          { operation: "file.list" },
        );
      }
      throw fileSystemError(error, target.path, "file.list");
    },
  );
  const files = entries.map((entry) => ({
    name: posix.basename(entry.relativePath),
    absolutePath: posix.join(target.path, entry.relativePath),
    relativePath: entry.relativePath,
    type: entry.type,
    size: entry.size,
    modifiedAt: new Date(entry.mtimeMs).toISOString(),
    mode: modeString(entry.mode),
    permissions: {
      readable: (entry.mode & 0o400) !== 0,
      writable: (entry.mode & 0o200) !== 0,
      executable: (entry.mode & 0o100) !== 0,
    },
  }));
  sendJson(context.response, 200, {
    success: true,
    path: target.path,
    files,
    count: files.length,
    timestamp: now(),
  });
}
