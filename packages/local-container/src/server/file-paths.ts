import { normalizeSandboxPath } from "@open-managed-agents/local-confinement";
import { hostPath } from "./command-runner.js";
import type { LocalContainer } from "./container-registry.js";
import { SESSIONLESS_ID } from "./request-schemas.js";
import { ControlApiError, fileNotFound } from "./control-api-error.js";

/** A file route's target as the container names it and as the container's file helper opens it. */
export interface ResolvedPath {
  /** Absolute container path. */
  readonly path: string;
  /**
   * The path handed to the file helper: the container path itself in a confined container (the helper
   * runs inside it, so the kernel resolves the path in the container's root, races included); the host
   * path in an unconfined one.
   */
  readonly target: string;
}

/**
 * Resolves a file route's path (relative paths against the session's cwd). In a confined container every
 * path lies in the container's root; the file helper inside it touches what a process in the container
 * would. An unconfined container's routes reach only its own trees; any other path → 403 `PERMISSION_DENIED`.
 */
export function resolveFilePath(
  container: LocalContainer,
  rawPath: string,
  sessionId: string | undefined,
): ResolvedPath {
  const session =
    sessionId === undefined || sessionId === SESSIONLESS_ID
      ? undefined
      : container.sessions.getOrCreate(sessionId);
  let path: string;
  try {
    path = normalizeSandboxPath(rawPath, session?.cwd ?? "/workspace");
  } catch {
    throw new ControlApiError("VALIDATION_FAILED", 400, "Path contains a NUL byte", {});
  }
  if (container.root !== undefined) return { path, target: path };
  // In rewrite mode a session's cwd is a host path, so a relative path may resolve under a host directory.
  const roots =
    container.namespace.mode === "rewrite"
      ? [...Object.keys(container.mounts), ...Object.values(container.mounts)]
      : Object.keys(container.mounts);
  const inside = roots.some((root) => path === root || path.startsWith(`${root}/`));
  if (!inside) {
    throw new ControlApiError(
      "PERMISSION_DENIED",
      403,
      `Path is outside the container's directories: ${path}`,
      { path, allowed: Object.keys(container.mounts) },
    );
  }
  return { path, target: hostPath(container, path) };
}

/** Turns a Node file-system error into the control API's error for `operation` on `path`. */
export function fileSystemError(error: unknown, path: string, operation: string): ControlApiError {
  if (ControlApiError.isInstance(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    error instanceof Error ? error.message.replace(/'[^']*'/g, `'${path}'`) : String(error);
  switch (code) {
    case "ENOENT":
      return fileNotFound(path, operation);
    case "EACCES":
    case "EPERM":
      return new ControlApiError(
        "PERMISSION_DENIED",
        403,
        `Permission denied: ${path}`,
        { path, operation },
        { operation },
      );
    case "EISDIR":
      return new ControlApiError(
        "IS_DIRECTORY",
        400,
        `Path is a directory: ${path}`,
        { path, operation },
        { operation },
      );
    case "ENOTDIR":
      return new ControlApiError(
        "NOT_DIRECTORY",
        400,
        `A parent of the path is not a directory: ${path}`,
        { path, operation },
        { operation },
      );
    case "ELOOP":
      return new ControlApiError(
        "VALIDATION_FAILED",
        400,
        `Too many levels of symbolic links: ${path}`,
        { path, operation },
        { operation },
      );
    case "EFBIG":
      return new ControlApiError(
        "FILE_TOO_LARGE",
        413,
        `File exceeds the container's file size limit: ${path}`,
        { path, operation },
        { operation },
      );
    case "EEXIST":
      return new ControlApiError(
        "FILE_EXISTS",
        409,
        `Path already exists: ${path}`,
        { path, operation },
        { operation },
      );
    default:
      return new ControlApiError(
        "FILESYSTEM_ERROR",
        500,
        `${operation} failed: ${reason}`,
        { path, operation },
        { operation },
      );
  }
}
